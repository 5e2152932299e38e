/**
 * What the rules read of the instances' data, and reading it for all rules together: the fields each rule reads,
 * whether its record is needed only for `priority`, and the field values of the rules that read no record.
 */
import pLimit from "p-limit";
import { actionKind } from "../actions/index.js";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, FieldRef } from "../rules/types.js";
import { exprRefs, LIST_ELEMENT_KEYS } from "../rules/ast-refs.js";
import { fieldKey } from "../model/field-values.js";
import { plural } from "../text/plural.js";
import type { Almanac } from "./almanac.js";
import { fetchFieldChunk, readRecordsForValues, type PageNeeds } from "./hydrate.js";
import { PAGE, planFieldBatches, type FieldBatchPlan, type QueryPlan } from "./query-plan.js";
import type { QueryRunner, RequestChoice } from "./run-queries.js";
import { rootOf } from "./query-plan.js";

/** What a group's listing left unknown, for a decision made with the workflow's other field readers. */
export interface FieldsLeft {
  /** a form-field page was asked already: pages it is, for the whole workflow */
  sentAny: boolean;
  /** the instances still waiting for a value */
  ids: number[];
  /** the form-field pages their values would cost */
  pages: number;
  rules: string[];
}

/** How a coupled group's last values come: read with records (already done), or asked by pages; or the read failed. */
export type FieldsDecision = { by: "records" } | { by: "pages" } | { by: "error"; error: unknown };

/**
 * What the streamed groups of a workflow whose other rules read other fields left unknown at the end of their
 * listings (./stream-group.ts): decided with those rules' values, as one workflow's field values are; the decision
 * is written back.
 */
export interface JointFields extends FieldsLeft {
  decision?: FieldsDecision;
}

/** Form-field requests handed to the client at once (it sends `--concurrency` of them at a time, 4 unless set). */
export const FIELD_REQUESTS_QUEUED = 64;

/**
 * Field values the remaining rules need, for all of them together: per field of a workflow, the ids still unknown,
 * one form-field request per 500 (or one read per instance when there are fewer instances than requests).
 */
export async function prefetchFields(
  client: ApiClient,
  almanac: Almanac,
  runner: QueryRunner,
  plan: QueryPlan,
  rules: ReadonlyArray<{ key: string; rule: CompiledRule; needs: PageNeeds }>,
  knownKeys: (processId: number) => readonly string[],
  explain: (c: RequestChoice) => void,
  joint: ReadonlyMap<number, JointFields> = new Map(),
): Promise<Map<string, unknown>> {
  const needs: Array<{ processId: number; fields: FieldRef[]; ids: number[]; rule: string; root: string }> = [];
  for (const p of rules) {
    const q = plan.rules.get(p.key);
    if (!q || p.needs.fields.length === 0) continue;
    try {
      const { items } = await runner.listing(q.selection);
      const root = rootOf(plan, q.selection);
      needs.push({
        processId: p.needs.processId,
        fields: p.needs.fields,
        ids: items.ids(),
        rule: p.key,
        root,
      });
    } catch {
      // the rule fails when it is evaluated, with the listing's error
    }
  }
  const batches = planFieldBatches(needs, (key, id) => almanac.values.get(key)?.has(id) === true);
  // when every rule that reads a field selects from one listing (shared, or filtered from it), the field's ids are
  // asked in that listing's order: the very pages a group streamed over that listing asks (./stream-group.ts); the
  // same ids, so the same number of pages, as in the order of the rules
  for (const b of batches) {
    const roots = new Set(
      needs
        .filter(
          (n) =>
            n.processId === b.processId && n.fields.some((f) => f.step === b.field.step && f.action === b.field.action),
        )
        .map((n) => n.root),
    );
    const [root] = roots;
    if (roots.size !== 1 || root === undefined) continue;
    let order: number[];
    try {
      order = (await runner.listing(root)).items.ids();
    } catch {
      continue;
    }
    const ids = new Set(b.ids);
    const ordered = order.filter((id) => ids.has(id));
    if (ordered.length === b.ids.length) b.ids = ordered;
  }
  const byWorkflow = new Map<number, FieldBatchPlan[]>();
  for (const b of batches) byWorkflow.set(b.processId, [...(byWorkflow.get(b.processId) ?? []), b]);
  for (const processId of joint.keys()) if (!byWorkflow.has(processId)) byWorkflow.set(processId, []);
  // a failure fails the rules that read the field (their plan would be short of its values), not the others
  const failures = new Map<string, unknown>();
  // the requests wait their turn as closures, not as requests built up front: a queued request holds its path
  // (500 ids) until sent, which for every field page of a large tenant at once was tens of MB
  const limit = pLimit(FIELD_REQUESTS_QUEUED);
  await Promise.all(
    [...byWorkflow.entries()].map(async ([processId, list]) => {
      // the values streamed groups of this workflow left unknown count with these (./stream-group.ts)
      const also = joint.get(processId);
      const pages = list.reduce((n, b) => n + b.pages, 0) + (also?.pages ?? 0);
      const ids = new Set([...list.flatMap((b) => b.ids), ...(also?.ids ?? [])]);
      const users = (f: FieldRef): string[] =>
        needs
          .filter((n) => n.processId === processId && n.fields.some((g) => g.step === f.step && g.action === f.action))
          .map((n) => n.rule);
      if (also) also.decision = { by: "pages" };
      if (also?.sentAny !== true && ids.size > 0 && ids.size < pages) {
        explain({
          subject: "field values",
          workflow_id: processId,
          choice: "record reads",
          requests: ids.size,
          why: `${ids.size} record reads bring every field: fewer than ${pages} form-field pages`,
          rules: [...new Set([...list.flatMap((b) => users(b.field)), ...(also?.rules ?? [])])],
        });
        try {
          await readRecordsForValues(client, almanac, [...ids], knownKeys(processId));
          if (also) also.decision = { by: "records" };
        } catch (err) {
          for (const b of list) failures.set(`${processId}:${fieldKey(b.field.step, b.field.action)}`, err);
          if (also) also.decision = { by: "error", error: err };
        }
        return;
      }
      await Promise.all(
        list.map(async (b) => {
          explain({
            subject: `field ${b.field.step}/${b.field.action}`,
            workflow_id: processId,
            choice: "field pages",
            requests: b.pages,
            why: `${plural(b.ids.length, "instance")} not yet known, asked once for all rules, ${PAGE} a page`,
            rules: users(b.field),
          });
          const chunks: number[][] = [];
          for (let i = 0; i < b.ids.length; i += PAGE) chunks.push(b.ids.slice(i, i + PAGE));
          try {
            await Promise.all(
              chunks.map((chunk) => limit(() => fetchFieldChunk(client, almanac, processId, b.field, chunk))),
            );
          } catch (err) {
            failures.set(`${processId}:${fieldKey(b.field.step, b.field.action)}`, err);
          }
        }),
      );
    }),
  );
  return failures;
}

/**
 * Fields to read for a rule: those its expressions read, plus those its actions read (a save reads the values it
 * writes, so that one whose values already hold is left out and a scheduled run of a save rule is idempotent).
 */
export function fieldRefs(rule: CompiledRule): FieldRef[] {
  const refs = rule.needs.fields.flatMap((alias) => {
    const ref = rule.fields[alias];
    return ref ? [ref] : [];
  });
  for (const a of rule.actions) refs.push(...actionKind(a.kind).reads(a));
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.step}:${r.action}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

/**
 * The record is needed only for `priority` among the keys the actions read (a report's group_by or columns; no `when`
 * or template reads the record, no action makes a change): the priority lists may answer it instead of reads.
 */
export function priorityOnly(rule: CompiledRule): boolean {
  if (!rule.needs.record || rule.actions.some((a) => actionKind(a.kind).mutating)) return false;
  if (rule.when && exprRefs(rule.when.expr).record) return false;
  let priority = false;
  for (const a of rule.actions) {
    for (const k of actionKind(a.kind).recordKeys(a)) {
      if (k === "priority") priority = true;
      else if (!k.startsWith("fields.") && !(LIST_ELEMENT_KEYS as readonly string[]).includes(k)) return false;
    }
  }
  return priority;
}

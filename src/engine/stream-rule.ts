/**
 * One rule over a selection it alone uses, evaluated while the selection is listed, page by page: its elements are
 * never all held at once, so a first sync's memory does not grow with the tenant (docs/performance.md, "Memory").
 * The outcome is the one of listing the selection whole and evaluating it after (./evaluate-rule.ts): the same
 * requests, the same plan. Field values are asked 500 ids at a time as the ids come, exactly the form-field pages
 * the whole listing would have asked for (./plan-fields.ts): only what is still unknown, in listing order; instances
 * wait (at most 500 per field) until their values are in, and what the plan shows of them is put back in listing order.
 */
import type { InstanceListItem } from "../api/index.js";
import { fieldKey } from "../model/field-values.js";
import type { FieldRef } from "../rules/types.js";
import { plural } from "../text/plural.js";
import { addOutcome, type RuleResult } from "./assemble.js";
import type { InstanceOutcome } from "./evaluate-instance.js";
import {
  CHUNK,
  evaluateChunk,
  explainRecordReads,
  ruleExclusion,
  type ChunkRun,
  type EvaluateContext,
} from "./evaluate-rule.js";
import { fetchFieldChunk, readRecordsForValues } from "./hydrate.js";
import type { PlannedRule } from "./plan-targets.js";
import { PAGE, type QueryPlan } from "./query-plan.js";

/** The most fields a streamed rule reads: with more, the choice of record reads over field pages could differ. */
export const STREAM_MAX_FIELDS = 250;

/**
 * Whether a rule's selection can be streamed: it is listed, used by this rule alone (no other rule, probe, priority
 * list or filtered selection leans on it), and the rule's field values are asked for it alone (no other rule of its
 * workflow reads fields without reading records, nor may come to: a priority report).
 */
export function streamable(p: PlannedRule, planned: readonly PlannedRule[], plan: QueryPlan): boolean {
  const q = plan.rules.get(p.key);
  const sel = q ? plan.selections.get(q.selection) : undefined;
  if (!q || !sel || sel.source.kind !== "list" || sel.users.length !== 1 || sel.users[0] !== p.key) return false;
  if (q.probes.length > 0 || q.priorityLists) return false;
  for (const s of plan.selections.values()) if (s.source.kind === "filter" && s.source.parent === sel.id) return false;
  // another rule's priority may be read from this very selection, listed whole then
  for (const o of plan.rules.values())
    if (o.priorityLists && Object.values(o.priorityLists).includes(sel.id)) return false;
  if (p.needs.record || p.needs.fields.length === 0) return true;
  if (p.needs.fields.length > STREAM_MAX_FIELDS) return false;
  return !planned.some(
    (o) =>
      o !== p &&
      o.needs.processId === p.needs.processId &&
      o.needs.fields.length > 0 &&
      (!o.needs.record || plan.rules.get(o.key)?.priorityLists !== undefined),
  );
}

/** What a rule's result was before a stream, to go back to when the listing fails (nothing of it is then planned). */
function resultBefore(result: RuleResult): () => void {
  const { selected, matched, skipped, excluded } = result;
  const skipReasons = new Map(result.skipReasons);
  const errors = result.errors.length;
  const startedTimes = new Map(result.startedTimes);
  return () => {
    Object.assign(result, { selected, matched, skipped, skipReasons, startedTimes });
    if (excluded === undefined) delete result.excluded;
    else result.excluded = excluded;
    result.errors.length = errors;
  };
}

interface FieldBuffer {
  ref: FieldRef;
  key: string;
  /** ids not yet asked for */
  ids: number[];
  /** ids asked for in all */
  unknown: number;
}

export async function streamRule(ctx: EvaluateContext, p: PlannedRule, drop: readonly string[]): Promise<void> {
  const { client, almanac, plan, runner } = ctx;
  const { rule, result, needs } = p;
  if (ctx.failed(rule.name)) return;
  const q = plan.rules.get(p.key);
  if (!q) return;
  const restore = resultBefore(result);
  // outcomes that show in the plan wait here when instances are evaluated out of listing order, and go in in order
  const kept: Array<[number, InstanceOutcome]> = [];
  const seq = new Map<number, number>();
  let n = 0;
  const buffers: FieldBuffer[] = needs.record
    ? []
    : needs.fields.map((ref) => ({ ref, key: fieldKey(ref.step, ref.action), ids: [], unknown: 0 }));
  const inOrder = buffers.length === 0;
  const run: ChunkRun = {
    exclusion: ruleExclusion(ctx, p),
    probes: [],
    add: (o) => {
      const at = seq.get(o.instance_id) ?? 0;
      seq.delete(o.instance_id);
      if (inOrder || (o.error === undefined && !o.matched)) addOutcome(result, o);
      else kept.push([at, o]);
    },
    drop,
  };
  const waiting = new Map<number, { item: InstanceListItem; missing: number }>();
  const ready: InstanceListItem[] = [];
  let done = 0;
  let total = 0;
  let unread = 0;
  let sentAny = false;
  const evaluate = async (all: boolean): Promise<void> => {
    while (ready.length >= CHUNK || (all && ready.length > 0)) {
      const chunk = ready.splice(0, CHUNK);
      await evaluateChunk(ctx, p, chunk, run);
      // an excluded instance has no outcome: its place is forgotten here
      for (const i of chunk) seq.delete(i.id);
      done += chunk.length;
      ctx.onProgress?.({ rule: rule.name, done, total: Math.max(done, total) });
    }
  };
  const arrived = (ids: readonly number[]): void => {
    for (const id of ids) {
      const w = waiting.get(id);
      if (!w || --w.missing > 0) continue;
      waiting.delete(id);
      ready.push(w.item);
    }
  };
  const send = async (b: FieldBuffer, ids: number[]): Promise<void> => {
    sentAny = true;
    await fetchFieldChunk(client, almanac, needs.processId, b.ref, ids);
    arrived(ids);
  };
  let listed = false;
  try {
    for await (const page of runner.pages(q.selection)) {
      total = page.count;
      for (const item of page.items) {
        seq.set(item.id, n++);
        if (needs.record && !almanac.records.has(item.id)) unread += 1;
        let missing = 0;
        for (const b of buffers) {
          if (almanac.values.get(b.key)?.has(item.id) === true) continue;
          b.ids.push(item.id);
          b.unknown += 1;
          missing += 1;
        }
        if (missing === 0) ready.push(item);
        else waiting.set(item.id, { item, missing });
      }
      for (const b of buffers) while (b.ids.length >= PAGE) await send(b, b.ids.splice(0, PAGE));
      await evaluate(false);
    }
    listed = true;
    await lastValues(ctx, p, buffers, waiting, sentAny, send, ready);
    await evaluate(true);
    if (needs.record) explainRecordReads(ctx, p, unread, n);
  } catch (err) {
    // a listing or a field read that fails plans none of the rule, as when it failed before any evaluation; a
    // record read that fails keeps what was evaluated before it, as a rule evaluated after its listing does
    if (!listed || !inOrder) restore();
    ctx.fail(rule, result, err);
    return;
  }
  kept.sort((a, b) => a[0] - b[0]);
  for (const [, o] of kept) addOutcome(result, o);
}

/**
 * The values still unknown once the selection is listed: one read per instance when that is fewer requests than
 * the field pages (decided on the totals, as ./plan-fields.ts does, when no page was asked yet; once a field had
 * 500 unknown ids the pages are always fewer), else the last page of each field.
 */
async function lastValues(
  ctx: EvaluateContext,
  p: PlannedRule,
  buffers: FieldBuffer[],
  waiting: Map<number, { item: InstanceListItem }>,
  sentAny: boolean,
  send: (b: FieldBuffer, ids: number[]) => Promise<void>,
  ready: InstanceListItem[],
): Promise<void> {
  const { client, almanac, explain } = ctx;
  const processId = p.needs.processId;
  const pages = buffers.reduce((k, b) => k + Math.ceil(b.unknown / PAGE), 0);
  const ids = [...waiting.keys()];
  if (!sentAny && ids.length > 0 && ids.length < pages) {
    explain({
      subject: "field values",
      workflow_id: processId,
      choice: "record reads",
      requests: ids.length,
      why: `${ids.length} record reads bring every field: fewer than ${pages} form-field pages`,
      rules: [p.key],
    });
    await readRecordsForValues(client, almanac, ids, p.needs.knownKeys ?? []);
    // the records bring every field (a record that could not be read is asked again when its instance is hydrated)
    for (const w of waiting.values()) ready.push(w.item);
    waiting.clear();
    for (const b of buffers) b.ids = [];
    return;
  }
  for (const b of buffers) {
    if (b.unknown === 0) continue;
    explain({
      subject: `field ${b.ref.step}/${b.ref.action}`,
      workflow_id: processId,
      choice: "field pages",
      requests: Math.ceil(b.unknown / PAGE),
      why: `${plural(b.unknown, "instance")} not yet known, asked once for all rules, ${PAGE} a page`,
      rules: [p.key],
    });
  }
  await Promise.all(buffers.filter((b) => b.ids.length > 0).map((b) => send(b, b.ids.splice(0))));
}

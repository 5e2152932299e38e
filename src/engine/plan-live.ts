/**
 * The live planning pipeline: resolve → plan the queries of the whole rule set (./query-plan.ts) → list each
 * distinct selection once (cursor pages of 500) → hydrate (records first, then field pages for all rules together)
 * → evaluate → assemble. Everything that touches the network goes through the API client; the plan itself comes from
 * the pure functions, and does not depend on which rule's request brought a value.
 */
import { actionKind } from "../actions/index.js";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, FieldRef, RuleSet } from "../rules/types.js";
import { VERSION } from "../model/version.js";
import { newAlmanac } from "./almanac.js";
import { addOutcome, assemblePlan, newRuleResult, type PlanMeta, type RuleResult } from "./assemble.js";
import { planBindings } from "./context.js";
import { evaluateInstance } from "./evaluate-instance.js";
import { fetchFieldChunk, hydratePage, readRecordsForValues, type PageNeeds } from "./hydrate.js";
import type { Almanac } from "./almanac.js";
import type { KnownRecordKeys } from "../actions/instance.js";
import { exprRefs, LIST_ELEMENT_KEYS } from "../rules/ast-refs.js";
import { fieldKey } from "../model/field-values.js";
import {
  choosePriority,
  PAGE,
  pagesFor,
  planFieldBatches,
  planQueries,
  priorityListSelections,
  type FieldBatchPlan,
  type QueryPlan,
  type RuleQueryInput,
} from "./query-plan.js";
import { QueryRunner, queryWords, type RequestChoice } from "./run-queries.js";
import type { Plan, PlanError } from "../plan/types.js";
import { resolveWorkflows } from "./resolve.js";
import { exclusionFilter } from "./exclusions.js";
import { inactiveRules } from "./active-rules.js";
import { fitRule } from "./structure-fit.js";
import { structureReader, type StructureReader } from "./structure.js";
import { namesOfSnapshot, namesOfStructure, type NameSource } from "./names.js";
import type { WorkflowStructure } from "../model/structure.js";
import { selectQuery, stepsToProbe } from "./select.js";
import { errorMessage } from "../model/guards.js";
import { seeInstances, withSeen, type SeenInstances } from "./seen.js";
import { DEFAULT_CLOCK_SKEW_MS } from "../model/settings.js";
import { plural } from "../text/plural.js";

export type { RequestChoice } from "./run-queries.js";

export interface PlanProgress {
  rule: string;
  /** instances of this rule's selection processed so far */
  done: number;
  /** instances of the selection this run plans (the shard's share when sharded) */
  total: number;
}

export interface RunPlanOptions {
  client: ApiClient;
  ruleSet: RuleSet;
  /** the plan's start; relative dates and `$now()` resolve against it */
  now?: Date;
  onProgress?: (p: PlanProgress) => void;
  /** keep only instances with `id % count === index` (deterministic sharding of the selection) */
  shard?: { index: number; count: number };
  /** instances carrying this tag are changed by no rule (docs/rollout.md); undefined = off */
  optOutTag?: string;
  /** the committed workflow catalog, if any: the live structure is compared with it */
  catalog?: WorkflowStructure[];
  /** one line per warning (drift from the catalog, a structure that cannot be read) */
  onWarning?: (message: string) => void;
  /** each request choice of the query planner, with its reason (`plan --explain-requests`, `plan.requests` events) */
  onRequestChoice?: (c: RequestChoice) => void;
  /**
   * record what the plan saw of each instance it plans a change for (./seen.ts): one more list per workflow with
   * enforce rules, for plans that will be applied (`plan --out`, `apply --auto-approve`, `watch`)
   */
  recordSeen?: boolean;
  /**
   * the facts already read, shared by the plans of one forecast (./forecast.ts): the data is read once, only the
   * instant moves
   */
  almanac?: Almanac;
}

/**
 * Field values the remaining rules need, for all of them together: per field of a workflow, the ids still unknown,
 * one form-field request per 500 (or one read per instance when there are fewer instances than requests).
 */
async function prefetchFields(
  client: ApiClient,
  almanac: Almanac,
  runner: QueryRunner,
  plan: QueryPlan,
  rules: ReadonlyArray<{ key: string; rule: CompiledRule; needs: PageNeeds }>,
  knownKeys: (processId: number) => readonly string[],
  explain: (c: RequestChoice) => void,
): Promise<Map<string, unknown>> {
  const needs: Array<{ processId: number; fields: FieldRef[]; ids: number[]; rule: string }> = [];
  for (const p of rules) {
    const q = plan.rules.get(p.key);
    if (!q || p.needs.fields.length === 0) continue;
    try {
      const { items } = await runner.listing(q.selection);
      needs.push({ processId: p.needs.processId, fields: p.needs.fields, ids: items.map((i) => i.id), rule: p.key });
    } catch {
      // the rule fails when it is evaluated, with the listing's error
    }
  }
  const batches = planFieldBatches(needs, (key, id) => almanac.values.get(key)?.has(id) === true);
  const byWorkflow = new Map<number, FieldBatchPlan[]>();
  for (const b of batches) byWorkflow.set(b.processId, [...(byWorkflow.get(b.processId) ?? []), b]);
  // a failure fails the rules that read the field (their plan would be short of its values), not the others
  const failures = new Map<string, unknown>();
  await Promise.all(
    [...byWorkflow.entries()].map(async ([processId, list]) => {
      const pages = list.reduce((n, b) => n + b.pages, 0);
      const ids = new Set(list.flatMap((b) => b.ids));
      const users = (f: FieldRef): string[] =>
        needs
          .filter((n) => n.processId === processId && n.fields.some((g) => g.step === f.step && g.action === f.action))
          .map((n) => n.rule);
      if (ids.size < pages) {
        explain({
          subject: "field values",
          workflow_id: processId,
          choice: "record reads",
          requests: ids.size,
          why: `${ids.size} record reads bring every field: fewer than ${pages} form-field pages`,
          rules: [...new Set(list.flatMap((b) => users(b.field)))],
        });
        try {
          await readRecordsForValues(client, almanac, [...ids], knownKeys(processId));
        } catch (err) {
          for (const b of list) failures.set(`${processId}:${fieldKey(b.field.step, b.field.action)}`, err);
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
            await Promise.all(chunks.map((chunk) => fetchFieldChunk(client, almanac, processId, b.field, chunk)));
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
function fieldRefs(rule: CompiledRule): FieldRef[] {
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
function priorityOnly(rule: CompiledRule): boolean {
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

const CHUNK = 500;

/** Where the plan's names come from, per workflow, best first: the live structure, a record's snapshot, the catalog. */
function nameSources(
  read: ReadonlyMap<number, WorkflowStructure>,
  snapshots: ReadonlyMap<number, { snapshot: unknown }>,
  catalog: readonly WorkflowStructure[] = [],
): Map<number, NameSource[]> {
  const out = new Map<number, NameSource[]>();
  const add = (id: number, source: NameSource): void => void out.set(id, [...(out.get(id) ?? []), source]);
  for (const [id, s] of read) add(id, namesOfStructure(s));
  for (const [id, s] of snapshots) add(id, namesOfSnapshot(id, s.snapshot));
  for (const s of catalog) add(s.workflow.id, namesOfStructure(s));
  return out;
}

export async function runPlan(opts: RunPlanOptions): Promise<Plan> {
  const { results, meta } = await planResults(opts);
  return assemblePlan(results, meta);
}

/**
 * The per-rule results of one run and what the plan is assembled with, before assembly: `plan --compare` assembles
 * the two versions of the rules apart (src/engine/plan-compare.ts), so one version's changes never clash with the other's.
 */
export async function planResults(opts: RunPlanOptions): Promise<{ results: RuleResult[]; meta: PlanMeta }> {
  const { client, ruleSet } = opts;
  const now = opts.now ?? new Date();
  const nowIso = now.toISOString();
  const bindings = planBindings(now);
  const almanac = opts.almanac ?? newAlmanac();
  const ruleErrors = new Map<string, PlanError>();
  const explain = opts.onRequestChoice ?? (() => undefined);

  // a rule outside its active window sends no request at all, not even to resolve its workflow
  const inactive = inactiveRules(ruleSet.rules, now);
  const running = ruleSet.rules.filter((r) => !inactive.has(r.name));
  let resolved;
  try {
    resolved = await resolveWorkflows(client, running);
  } catch (err) {
    resolved = new Map(running.map((r) => [r.name, { error: `rule "${r.name}": ${errorMessage(err)}` }]));
  }

  const fieldKeys = new Map<number, Set<string>>();
  const inputs: RuleQueryInput[] = [];
  const results: RuleResult[] = [];
  // `key` names the rule in the query plan: its name, or for a rule over several workflows its name and the workflow
  const planned: Array<{ key: string; rule: CompiledRule; result: RuleResult; needs: PageNeeds }> = [];
  // the structures read for the structure checks are also where the plan's names come from (no request of their own)
  const read = new Map<number, WorkflowStructure>();
  const reader = structureReader(client);
  const structures: StructureReader = {
    read: async (id, known) => {
      const r = await reader.read(id, known);
      if ("structure" in r) read.set(id, r.structure);
      return r;
    },
  };
  // per workflow, the process_snapshot of the lowest-id record read: names for workflows whose structure was not read
  const snapshots = new Map<number, { id: number; snapshot: unknown }>();
  const warned = new Set<string>();
  const warn = (m: string): void => {
    if (warned.has(m)) return;
    warned.add(m);
    opts.onWarning?.(m);
  };
  // a rule that does not fit its workflow: its structure errors, none of its changes, no part in any listing
  const structureErrors = new Map<string, PlanError[]>();

  for (const written of ruleSet.rules) {
    const off = inactive.get(written.name);
    if (off) {
      results.push({
        ...newRuleResult(
          written,
          typeof written.workflow === "object" && "id" in written.workflow ? written.workflow.id : null,
        ),
        inactive: off,
      });
      continue;
    }
    const r = resolved.get(written.name);
    if (!r || "error" in r) {
      ruleErrors.set(written.name, {
        code: "resolve",
        rule: written.name,
        message: r && "error" in r ? r.error : `rule "${written.name}": unresolved`,
      });
      results.push(newRuleResult(written, null));
      continue;
    }
    // a rule over several workflows is planned in each (requests stay per workflow) into one result
    const targets = "many" in r ? r.many : [r];
    const single = !("many" in r);
    const result = single ? newRuleResult(written, r.id, r.name) : newRuleResult(written, null);
    if (!single) result.workflowIds = targets.map((t) => t.id);
    results.push(result);
    const fits: Array<{ target: { id: number }; fit: Awaited<ReturnType<typeof fitRule>> }> = [];
    for (const target of targets) {
      // steps and fields are checked against the live structure (names resolved to ids) before any selection
      const fit = await fitRule(written, target.id, structures, opts.catalog);
      fit.warnings.forEach(warn);
      if (fit.errors.length > 0) {
        if ("many" in r && r.all) {
          // "*": a workflow the rule's names do not fit is skipped, and the plan says so
          const reason = fit.errors.map((e) => e.message.replace(`rule "${written.name}": `, "")).join("; ");
          result.workflowsSkipped = [...(result.workflowsSkipped ?? []), { workflow_id: target.id, reason }];
          continue;
        }
        structureErrors.set(written.name, [...(structureErrors.get(written.name) ?? []), ...fit.errors]);
      }
      fits.push({ target, fit });
    }
    // a rule that does not fit one of the workflows it names plans in none of them
    const fitsAll = !structureErrors.has(written.name);
    for (const { target, fit } of fits) {
      const rule = fit.rule ?? written;
      if (single) result.rule = rule;
      // a rule's own `exclude` is always counted; the opt-out tag only shows when it excluded something
      if (rule.exclude) result.excluded = 0;
      if (!fit.rule || !fitsAll) continue;
      const key = single ? rule.name : `${rule.name} (workflow ${target.id})`;
      const fields = fieldRefs(rule);
      const keys = fieldKeys.get(target.id) ?? new Set<string>();
      for (const f of fields) keys.add(fieldKey(f.step, f.action));
      fieldKeys.set(target.id, keys);
      planned.push({
        key,
        rule,
        result,
        needs: { processId: target.id, record: rule.needs.record, cacheRecords: false, fields },
      });
      inputs.push({
        rule: key,
        processId: target.id,
        query: selectQuery(rule.select, now),
        record: rule.needs.record,
        fields,
        probeSteps: stepsToProbe(rule),
        priorityOnly: priorityOnly(rule),
      });
    }
  }
  // what the plan sees of the instances it may change, before it reads any of their data (./seen.ts)
  const changing = planned.filter(
    (p) => p.rule.mode !== "audit" && p.rule.actions.some((a) => actionKind(a.kind).mutating),
  );
  let seen: SeenInstances | undefined;
  if (opts.recordSeen === true && changing.length > 0) {
    try {
      const selections = changing.map((p) => ({
        processId: p.needs.processId,
        query: selectQuery(p.rule.select, now),
      }));
      seen = await seeInstances(client, selections, new Date(now.getTime() - DEFAULT_CLOCK_SKEW_MS));
    } catch {
      seen = undefined; // the changes then carry no bound: apply refuses those it finds changed (the safe side)
    }
  }
  const knownKeys = (processId: number): string[] => [...(fieldKeys.get(processId) ?? [])];
  // one read of a record serves every rule of its workflow: with completion times when any of them reads them
  const timed = new Set(planned.filter((p) => p.rule.needs.times === true).map((p) => p.needs.processId));
  const times = (processId: number): boolean => timed.has(processId);
  const plan = planQueries(inputs);
  const runner = new QueryRunner(client, plan, almanac, {
    ...(opts.shard ? { shard: opts.shard } : {}),
    knownKeys,
    times,
    explain,
    warn,
  });
  for (const s of plan.selections.values()) {
    // every listing starts now (the client caps requests in flight), so one selection's pages overlap another's work
    if (s.source.kind === "list") void runner.listing(s.id).catch(() => undefined);
    if (s.source.kind === "filter")
      explain({
        subject: queryWords(s),
        workflow_id: s.processId,
        choice: "filter",
        requests: 0,
        why: s.why,
        rules: s.users,
      });
  }
  const fail = (rule: CompiledRule, result: RuleResult, err: unknown): void => {
    // an API failure fails this rule's plan (none of its changes), the others are still planned
    result.changes = [];
    result.reportEntries.clear();
    ruleErrors.set(rule.name, { code: "api", rule: rule.name, message: `rule "${rule.name}": ${errorMessage(err)}` });
  };

  // priority from lists where that costs fewer requests than reading the records
  for (const p of planned) {
    const q = plan.rules.get(p.key);
    if (!q?.priorityLists) continue;
    try {
      const base = await runner.listing(q.selection);
      const readAnyway = plan.recordsRead.has(q.selection);
      const toAdd = Object.values(q.priorityLists).filter((id) => !plan.selections.has(id)).length;
      const choice = choosePriority(base.count, readAnyway ? 0 : base.items.length, toAdd);
      explain({
        subject: `priority of ${p.rule.name}`,
        workflow_id: p.needs.processId,
        choice: choice.lists ? "priority lists" : "record reads",
        requests: choice.lists ? toAdd * pagesFor(base.count) : readAnyway ? 0 : base.items.length,
        why: choice.why,
        rules: [p.rule.name],
      });
      if (!choice.lists) continue;
      const known = new Map<number, KnownRecordKeys>(base.items.map((i) => [i.id, { priority: null }]));
      for (const sel of priorityListSelections(plan, p.rule.name, runner.selection(q.selection))) {
        const value = sel.query.priority === "V" ? "V" : "H";
        for (const i of (await runner.listing(sel.id)).items) if (known.has(i.id)) known.set(i.id, { priority: value });
      }
      p.needs = { ...p.needs, record: false, known };
    } catch (err) {
      fail(p.rule, p.result, err);
    }
  }
  // records are kept for reuse only when several rules of one workflow still read them once priorities are chosen
  // (a rule answered by priority lists reads none): a kept record holds its whole snapshot until the run ends
  const recordReaders = new Map<number, number>();
  for (const p of planned)
    if (p.needs.record) recordReaders.set(p.needs.processId, (recordReaders.get(p.needs.processId) ?? 0) + 1);
  // records of a selection that others are filtered from by record keys are kept for those filters
  const filteredFrom = new Set(
    [...plan.selections.values()].flatMap((s) =>
      s.source.kind === "filter" && s.source.records ? [s.source.parent] : [],
    ),
  );
  for (const p of planned) {
    const selection = plan.rules.get(p.key)?.selection ?? "";
    if (p.needs.record)
      p.needs.cacheRecords = (recordReaders.get(p.needs.processId) ?? 0) > 1 || filteredFrom.has(selection);
    p.needs.knownKeys = knownKeys(p.needs.processId);
    if (times(p.needs.processId)) p.needs.times = true;
  }

  // a rollout limit plans the oldest instances first: their started_time, read only when the list element does not
  // tell it, the rule has more changes than its limit, and no read of the record brought it
  const learnStartedTimes = async (rule: CompiledRule, result: RuleResult): Promise<void> => {
    const limit = rule.limits.max_changes_per_run;
    if (limit === undefined || result.changes.length <= limit) return;
    const missing = [...new Set(result.changes.map((c) => c.instance_id))].filter((id) => !result.startedTimes.has(id));
    if (missing.length === 0) return;
    const processId = result.workflowId ?? 0;
    const why = `its rollout limit (${limit} a run) plans the oldest instances first`;
    const selected = result.selected;
    const pages = Math.max(1, Math.ceil(selected / PAGE));
    // over several workflows one listing cannot order them all: the records tell
    if (missing.length <= pages || result.workflowId === null) {
      explain({
        subject: `started times of ${rule.name}`,
        workflow_id: processId,
        choice: "record reads",
        requests: missing.length,
        why,
        rules: [rule.name],
      });
      const read = await Promise.all(missing.map((id) => almanac.records.get(id) ?? client.getInstance(id)));
      for (const record of read)
        if (typeof record.started_time === "string") result.startedTimes.set(record.id, record.started_time);
      return;
    }
    // fewer requests: the selection listed oldest first (4.2 ordering=started_time); its order stands for the times
    explain({
      subject: `started times of ${rule.name}`,
      workflow_id: processId,
      choice: "list ordered by started_time",
      requests: pages,
      why,
      rules: [rule.name],
    });
    // every instance with changes gets its rank, so known times and ranks are never compared with each other
    const want = new Set(result.changes.map((c) => c.instance_id));
    const ranks = new Map<number, string>();
    let rank = 0;
    for await (const page of client.instancePages(processId, {
      ...selectQuery(rule.select, now),
      ordering: "started_time",
    })) {
      for (const item of page.results) {
        rank += 1;
        // a rank as an instant: only the order matters, and the order is the service's by started_time
        if (want.has(item.id) && !ranks.has(item.id)) ranks.set(item.id, new Date(rank).toISOString());
      }
    }
    result.startedTimes = ranks;
  };

  const evaluateRule = async (p: (typeof planned)[number]): Promise<void> => {
    const { rule, result, needs } = p;
    if (ruleErrors.has(rule.name)) return;
    try {
      const q = plan.rules.get(p.key);
      if (!q) return;
      const listing = await runner.listing(q.selection);
      if (needs.record) {
        const unread = listing.items.filter((i) => !almanac.records.has(i.id)).length;
        explain({
          subject: `records of ${rule.name}`,
          workflow_id: needs.processId,
          choice: "record reads",
          requests: unread,
          why: `its conditions or report read the full record${unread < listing.items.length ? `; ${listing.items.length - unread} already read for another rule` : ""}`,
          rules: [rule.name],
        });
      }
      const probes: Array<[number, Set<number>]> = [];
      if (!needs.record) {
        for (const probe of q.probes)
          probes.push([probe.step, new Set((await runner.listing(probe.selection)).items.map((i) => i.id))]);
      }
      const exclusion = exclusionFilter(
        client,
        rule,
        needs.processId,
        selectQuery(rule.select, now),
        opts.optOutTag,
        needs.record,
      );
      let done = 0;
      for (let at = 0; at < listing.items.length; at += CHUNK) {
        const chunk = listing.items.slice(at, at + CHUNK);
        // excluded instances are counted as selected and never evaluated (nor hydrated, when known before)
        const out = await exclusion.excluded(chunk.map((i) => i.id));
        const items = chunk.filter((i) => !out.has(i.id));
        const hydrated = await hydratePage(client, almanac, items, needs);
        const data = hydrated.filter((d) => !(d.record && exclusion.excludedByRecord(d.id, d.record.tags)));
        const excluded = chunk.length - data.length;
        if (excluded > 0) {
          result.selected += excluded;
          result.excluded = (result.excluded ?? 0) + excluded;
        }
        for (const d of data) {
          if (probes.length > 0) d.stepActive = new Map(probes.map(([step, ids]) => [step, ids.has(d.id)]));
        }
        for (const d of data) {
          const snap = d.record?.process_snapshot;
          const had = snapshots.get(d.process_id);
          if (snap !== undefined && snap !== null && (!had || d.id < had.id))
            snapshots.set(d.process_id, { id: d.id, snapshot: snap });
          addOutcome(result, await evaluateInstance(rule, d, nowIso, bindings));
        }
        done += chunk.length;
        opts.onProgress?.({ rule: rule.name, done, total: Math.max(done, listing.items.length) });
      }
    } catch (err) {
      fail(rule, result, err);
    }
  };

  // rules that read records first: their snapshots bring field values other rules then need not ask for
  for (const p of planned) if (p.needs.record) await evaluateRule(p);
  const fieldFailures = await prefetchFields(
    client,
    almanac,
    runner,
    plan,
    planned.filter((p) => !p.needs.record && !ruleErrors.has(p.rule.name)),
    knownKeys,
    explain,
  );
  for (const p of planned) {
    const failed = p.needs.record
      ? undefined
      : p.needs.fields
          .map((f) => fieldFailures.get(`${p.needs.processId}:${fieldKey(f.step, f.action)}`))
          .find((e) => e !== undefined);
    if (failed !== undefined) fail(p.rule, p.result, failed);
  }
  for (const p of planned) if (!p.needs.record) await evaluateRule(p);

  for (const r of results) {
    if (ruleErrors.has(r.rule.name) || r.inactive) continue;
    try {
      await learnStartedTimes(r.rule, r);
    } catch (err) {
      fail(r.rule, r, err);
    }
  }

  const errors = ruleSet.rules.flatMap((r) => {
    const e = ruleErrors.get(r.name);
    return [...(structureErrors.get(r.name) ?? []), ...(e ? [e] : [])];
  });
  if (seen) for (const r of results) r.changes = r.changes.map((c) => withSeen(c, seen));
  return {
    results,
    meta: {
      createdAt: now,
      baseUrl: client.baseUrl,
      rulesDigest: ruleSet.digest,
      version: VERSION,
      requests: client.stats().total,
      errors,
      names: nameSources(read, snapshots, opts.catalog),
    },
  };
}

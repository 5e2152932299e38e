/**
 * The live planning pipeline: resolve → plan the queries of the whole rule set (./query-plan.ts) → list each
 * distinct selection once (cursor pages of 500) → hydrate (records first, then field pages for all rules together)
 * → evaluate → assemble. Everything that touches the network goes through the API client; the plan itself comes from
 * the pure functions, and does not depend on which rule's request brought a value.
 */
import { actionKind } from "../actions/index.js";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, RuleSet } from "../rules/types.js";
import { VERSION } from "../model/version.js";
import { newAlmanac, type Almanac } from "./almanac.js";
import { assemblePlan, type PlanMeta, type RuleResult } from "./assemble.js";
import { planBindings } from "./context.js";
import { PriorityKnown } from "./priority-known.js";
import { IdSet } from "../model/id-set.js";
import { fieldKey } from "../model/field-values.js";
import { choosePriority, pagesFor, planQueries, priorityListSelections } from "./query-plan.js";
import { QueryRunner, queryWords, type RequestChoice } from "./run-queries.js";
import type { Plan } from "../plan/types.js";
import type { WorkflowStructure } from "../model/structure.js";
import { selectQuery } from "./select.js";
import { errorMessage } from "../model/guards.js";
import { seeInstances, withSeen, type SeenInstances } from "./seen.js";
import { DEFAULT_CLOCK_SKEW_MS } from "../model/settings.js";
import { nameSources } from "./names.js";
import { prefetchFields, type FieldsDecision, type FieldsLeft, type JointFields } from "./plan-fields.js";
import { planTargets } from "./plan-targets.js";
import { learnStartedTimes } from "./started-times.js";
import { evaluateRule, type EvaluateContext, type PlanProgress } from "./evaluate-rule.js";
import { streamGroup } from "./stream-group.js";
import { streamGroups, type StreamGroup } from "./stream-groups.js";
import type { PlannedRule } from "./plan-targets.js";

export type { RequestChoice } from "./run-queries.js";
export type { PlanProgress } from "./evaluate-rule.js";

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
  /**
   * evaluate a listed selection, the selections filtered from it and every rule over them while it is listed, page
   * by page (./stream-groups.ts, ./stream-group.ts), and drop field values and records once no later rule reads
   * them, and keep only the ids of a priority list no rule selects; false: every selection listed whole first and
   * every value and record kept.
   * The same plan and requests either way (test/engine/stream.test.ts); off when an almanac is shared.
   */
  stream?: boolean;
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
  const explain = opts.onRequestChoice ?? (() => undefined);

  const warned = new Set<string>();
  const warn = (m: string): void => {
    if (warned.has(m)) return;
    warned.add(m);
    opts.onWarning?.(m);
  };
  const { results, planned, inputs, fieldKeys, ruleErrors, structureErrors, read } = await planTargets({
    client,
    ruleSet,
    now,
    catalog: opts.catalog,
    warn,
  });
  // per workflow, the process_snapshot of the lowest-id record read: names for workflows whose structure was not read
  const snapshots = new Map<number, { id: number; snapshot: unknown }>();
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
      const values = changing.some((p) => p.needs.record || p.needs.fields.length > 0);
      seen = await seeInstances(client, selections, new Date(now.getTime() - DEFAULT_CLOCK_SKEW_MS), values);
    } catch {
      seen = undefined; // the changes then carry no bound: apply refuses those it finds changed (the safe side)
    }
  }
  const knownKeys = (processId: number): string[] => [...(fieldKeys.get(processId) ?? [])];
  // one read of a record serves every rule of its workflow: with completion times when any of them reads them
  const timed = new Set(planned.filter((p) => p.rule.needs.times === true).map((p) => p.needs.processId));
  const times = (processId: number): boolean => timed.has(processId);
  const plan = planQueries(inputs);
  const lean = opts.almanac === undefined && opts.stream !== false;
  const groups = lean ? streamGroups(planned, plan) : [];
  const groupOf = new Map<PlannedRule, StreamGroup>();
  for (const g of groups) for (const p of g.rules) groupOf.set(p, g);
  const streamedSelections = new Set(groups.map((g) => g.root));
  const runner = new QueryRunner(client, plan, almanac, {
    ...(opts.shard ? { shard: opts.shard } : {}),
    knownKeys,
    times,
    explain,
    warn,
  });
  for (const s of plan.selections.values()) {
    // every listing starts now (the client caps requests in flight), so one selection's pages overlap another's work
    if (s.source.kind === "list" && !streamedSelections.has(s.id)) void runner.listing(s.id).catch(() => undefined);
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
    result.changes.clear();
    result.reportEntries.clear();
    ruleErrors.set(rule.name, { code: "api", rule: rule.name, message: `rule "${rule.name}": ${errorMessage(err)}` });
  };

  // priority from lists where that costs fewer requests than reading the records; a list no rule selects is asked
  // only which instances it holds (its ids kept, ./run-queries.ts), one a rule selects is that rule's listing
  const onlyPriority = new Set<string>();
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
      const known = new PriorityKnown();
      for (const id of Object.values(q.priorityLists)) if (!plan.selections.has(id)) onlyPriority.add(id);
      for (const sel of priorityListSelections(plan, p.rule.name, runner.selection(q.selection))) {
        let holds: IdSet;
        if (lean && onlyPriority.has(sel.id)) holds = await runner.idsOf(sel.id);
        else {
          holds = new IdSet();
          for (const id of (await runner.listing(sel.id)).items.ids()) holds.add(id);
        }
        (sel.query.priority === "V" ? known.v : known.h).push(holds);
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

  const ctx: EvaluateContext = {
    client,
    almanac,
    plan,
    runner,
    explain,
    now,
    nowIso,
    bindings,
    optOutTag: opts.optOutTag,
    snapshots,
    onProgress: opts.onProgress,
    failed: (rule) => ruleErrors.has(rule),
    fail,
  };

  // rules that read records first: their snapshots bring field values other rules then need not ask for; a streamed
  // group is evaluated where its first rule is, all its rules at once
  const order: PlannedRule[] = [];
  for (const records of [true, false])
    for (const p of planned) {
      if (p.needs.record !== records || order.includes(p)) continue;
      const g = groupOf.get(p);
      order.push(...(g ? g.rules : [p]));
    }
  const drops = lean ? lastReads(order) : new Map<PlannedRule, string[]>();
  // a record kept for a second rule of its workflow is dropped once the last rule that reads records has evaluated
  // its instance; kept to the end when a later step reads records: a filter by record keys (./run-queries.ts), or
  // the started times of a rollout limit (./started-times.ts)
  // (a streamed group applies its filters as it reads, so its own filters need nothing kept after it)
  const groupFilters = new Set(groups.flatMap((g) => g.selections.map((s) => s.id)));
  const releaseRecords =
    lean &&
    !planned.some((p) => p.rule.limits.max_changes_per_run !== undefined) &&
    ![...plan.selections.values()].some(
      (s) => s.source.kind === "filter" && s.source.records && !groupFilters.has(s.id),
    );
  const readsRecords = (p: PlannedRule): boolean =>
    p.needs.record || (groupOf.get(p)?.selections.some((s) => s.source.kind === "filter" && s.source.records) ?? false);
  const lastRecordReader = new Map<number, PlannedRule>();
  for (const p of order) if (readsRecords(p)) lastRecordReader.set(p.needs.processId, p);
  const releasedBy = new Set(releaseRecords ? lastRecordReader.values() : []);
  const ran = new Set<StreamGroup>();
  const evaluate = async (p: PlannedRule): Promise<void> => {
    const g = groupOf.get(p);
    if (!g) {
      await evaluateRule(ctx, p, drops.get(p) ?? [], releasedBy.has(p));
      forget(drops.get(p));
      return;
    }
    if (ran.has(g)) return;
    await runGroup(g);
  };
  // a field no later rule reads goes whole once its last reader has evaluated: the values its instances dropped, and
  // those of instances outside its selection (a record read brings every field of its workflow)
  const forget = (keys: readonly string[] = []): void => {
    for (const key of keys) almanac.values.delete(key);
  };
  const runGroup = (g: StreamGroup, share?: (left: FieldsLeft) => Promise<FieldsDecision>): Promise<void> => {
    ran.add(g);
    const groupDrops = {
      values: g.rules.flatMap((r) => drops.get(r) ?? []),
      records: g.rules.some((r) => releasedBy.has(r)),
    };
    return streamGroup(ctx, g, groupDrops, share).then(() => forget(groupDrops.values));
  };
  for (const p of planned) if (p.needs.record) await evaluate(p);
  if (releaseRecords) {
    // every rule that reads records has evaluated: what the last ones did not drop (instances outside their
    // selections) goes too
    almanac.records.clear();
    almanac.timed.clear();
  }
  // a group whose workflow's other rules read other fields is listed first, its pages asked as they fill; the values
  // its listing leaves unknown are then asked with theirs, by pages or record reads as for the workflow as a whole
  const joint = new Map<number, JointFields>();
  const coupled = groups.filter((g) => g.coupled && !ran.has(g));
  let waitingGroups = coupled.length;
  let allIn: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => (allIn = resolve));
  const arrive = (): void => {
    if (--waitingGroups === 0) allIn();
  };
  if (waitingGroups === 0) allIn();
  let decide: () => void = () => undefined;
  const decided = new Promise<void>((resolve) => (decide = resolve));
  const coupledRuns = coupled.map(async (g) => {
    let shared = false;
    const processId = g.rules[0]?.needs.processId ?? 0;
    try {
      await runGroup(g, async (left) => {
        shared = true;
        const j = joint.get(processId) ?? { sentAny: false, ids: [], pages: 0, rules: [] };
        joint.set(processId, {
          sentAny: j.sentAny || left.sentAny,
          ids: [...j.ids, ...left.ids],
          pages: j.pages + left.pages,
          rules: [...j.rules, ...left.rules],
        });
        arrive();
        await decided;
        return joint.get(processId)?.decision ?? { by: "pages" };
      });
    } finally {
      if (!shared) arrive();
    }
  });
  await arrived;
  let fieldFailures: Map<string, unknown>;
  try {
    fieldFailures = await prefetchFields(
      client,
      almanac,
      runner,
      plan,
      planned.filter((p) => !p.needs.record && !ruleErrors.has(p.rule.name) && !groupOf.has(p)),
      knownKeys,
      explain,
      joint,
    );
  } finally {
    decide();
  }
  await Promise.all(coupledRuns);
  for (const p of planned) {
    const failed = p.needs.record
      ? undefined
      : p.needs.fields
          .map((f) => fieldFailures.get(`${p.needs.processId}:${fieldKey(f.step, f.action)}`))
          .find((e) => e !== undefined);
    if (failed !== undefined) fail(p.rule, p.result, failed);
  }
  for (const p of planned) if (!p.needs.record) await evaluate(p);

  for (const r of results) {
    if (ruleErrors.has(r.rule.name) || r.inactive) continue;
    try {
      await learnStartedTimes({ client, almanac, explain, now }, r.rule, r);
    } catch (err) {
      fail(r.rule, r, err);
    }
  }

  const errors = ruleSet.rules.flatMap((r) => {
    const e = ruleErrors.get(r.name);
    return [...(structureErrors.get(r.name) ?? []), ...(e ? [e] : [])];
  });
  // applied as each change is read: the changes stay as they were added (./change-store.ts)
  if (seen) for (const r of results) r.changes.precondition((c) => withSeen(c, seen).precondition);
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

/**
 * Per rule, the field keys it is the last to read in evaluation order: their values are dropped as its instances
 * are evaluated, so they are not held to the end of the run (nothing after evaluation reads them).
 */
function lastReads(order: readonly PlannedRule[]): Map<PlannedRule, string[]> {
  const last = new Map<string, PlannedRule>();
  for (const p of order) for (const f of p.needs.fields) last.set(fieldKey(f.step, f.action), p);
  const out = new Map<PlannedRule, string[]>();
  for (const [key, p] of last) out.set(p, [...(out.get(p) ?? []), key]);
  return out;
}

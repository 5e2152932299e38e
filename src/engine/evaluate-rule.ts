/**
 * One rule over its selection: listed, hydrated and evaluated a chunk at a time, each outcome added to its result.
 */
import type { ApiClient, InstanceListItem } from "../api/index.js";
import type { Almanac } from "./almanac.js";
import { addOutcome } from "./assemble.js";
import type { Bindings } from "./context.js";
import { evaluateInstance, type InstanceOutcome } from "./evaluate-instance.js";
import { exclusionFilter, type ExclusionFilter } from "./exclusions.js";
import { hydratePage } from "./hydrate.js";
import type { QueryPlan } from "./query-plan.js";
import type { QueryRunner, RequestChoice } from "./run-queries.js";
import { selectQuery } from "./select.js";
import type { CompiledRule } from "../rules/types.js";
import type { RuleResult } from "./assemble.js";
import type { PlannedRule } from "./plan-targets.js";

export interface PlanProgress {
  rule: string;
  /** instances of this rule's selection processed so far */
  done: number;
  /** instances of the selection this run plans (the shard's share when sharded) */
  total: number;
}

export interface EvaluateContext {
  client: ApiClient;
  almanac: Almanac;
  plan: QueryPlan;
  runner: QueryRunner;
  explain: (c: RequestChoice) => void;
  now: Date;
  nowIso: string;
  bindings: Bindings;
  optOutTag: string | undefined;
  /** per workflow, the process_snapshot of the lowest-id record read: names for workflows whose structure was not read */
  snapshots: Map<number, { id: number; snapshot: unknown }>;
  onProgress: ((p: PlanProgress) => void) | undefined;
  /** whether the rule already failed (its plan is none of its changes) */
  failed: (rule: string) => boolean;
  fail: (rule: CompiledRule, result: RuleResult, err: unknown) => void;
}

/** Instances evaluated together: their exclusions asked and their data read at once. */
export const CHUNK = 500;

/** What one rule's chunks share: its exclusions, the steps its probes found active, where outcomes go. */
export interface ChunkRun {
  exclusion: ExclusionFilter;
  probes: Array<[number, Set<number>]>;
  /** each outcome, in the order the rule's outcomes are kept (./stream-group.ts may put them back in listing order) */
  add: (outcome: InstanceOutcome) => void;
  /** field keys no later rule reads: their values are dropped once the chunk is evaluated (./plan-live.ts) */
  drop: readonly string[];
  /** no later rule reads records: the chunk's records are dropped once it is evaluated */
  release?: boolean;
}

/** One chunk of a rule's selection: exclusions, hydration, evaluation; excluded instances only counted. */
export async function evaluateChunk(
  ctx: EvaluateContext,
  p: PlannedRule,
  chunk: InstanceListItem[],
  run: ChunkRun,
): Promise<void> {
  const { client, almanac, nowIso, bindings, snapshots } = ctx;
  const { rule, result, needs } = p;
  const { exclusion, probes } = run;
  // excluded instances are counted as selected and never evaluated (nor hydrated, when known before)
  const out = await exclusion.excluded(chunk.map((i) => i.id));
  const items = chunk.filter((i) => !out.has(i.id));
  const hydrated = await hydratePage(client, almanac, items, needs);
  // excluded by a record's tags: decided for the whole chunk before any instance is evaluated
  const evaluated = items.filter((i) => {
    const record = hydrated.record(i.id);
    return !(record && exclusion.excludedByRecord(i.id, record.tags));
  });
  const excluded = chunk.length - evaluated.length;
  if (excluded > 0) {
    result.selected += excluded;
    result.excluded = (result.excluded ?? 0) + excluded;
  }
  for (const item of evaluated) {
    const d = hydrated.data(item);
    if (probes.length > 0) d.stepActive = new Map(probes.map(([step, ids]) => [step, ids.has(d.id)]));
    const snap = d.record?.process_snapshot;
    const had = snapshots.get(d.process_id);
    if (snap !== undefined && snap !== null && (!had || d.id < had.id))
      snapshots.set(d.process_id, { id: d.id, snapshot: snap });
    run.add(await evaluateInstance(rule, d, nowIso, bindings));
  }
  for (const key of run.drop) {
    const values = almanac.values.get(key);
    if (values) for (const i of chunk) values.delete(i.id);
  }
  if (run.release === true)
    for (const i of chunk) {
      almanac.records.delete(i.id);
      almanac.timed.delete(i.id);
    }
}

/** The explanation of a rule's record reads: `unread` of its `selected` instances read for it. */
/** The instances a rule never touches: its own `exclude` and the opt-out tag (./exclusions.ts). */
export function ruleExclusion(ctx: EvaluateContext, p: PlannedRule): ExclusionFilter {
  const { rule, needs } = p;
  return exclusionFilter(
    ctx.client,
    rule,
    needs.processId,
    selectQuery(rule.select, ctx.now),
    ctx.optOutTag,
    needs.record,
  );
}

export function explainRecordReads(ctx: EvaluateContext, p: PlannedRule, unread: number, selected: number): void {
  ctx.explain({
    subject: `records of ${p.rule.name}`,
    workflow_id: p.needs.processId,
    choice: "record reads",
    requests: unread,
    why: `its conditions or report read the full record${unread < selected ? `; ${selected - unread} already read for another rule` : ""}`,
    rules: [p.rule.name],
  });
}

export async function evaluateRule(
  ctx: EvaluateContext,
  p: PlannedRule,
  drop: readonly string[] = [],
  release = false,
): Promise<void> {
  const { almanac, plan, runner } = ctx;
  const { rule, result, needs } = p;
  if (ctx.failed(rule.name)) return;
  try {
    const q = plan.rules.get(p.key);
    if (!q) return;
    const listing = await runner.listing(q.selection);
    if (needs.record) {
      let unread = 0;
      for (const id of listing.items.ids()) if (!almanac.records.has(id)) unread += 1;
      explainRecordReads(ctx, p, unread, listing.items.length);
    }
    const probes: Array<[number, Set<number>]> = [];
    if (!needs.record) {
      for (const probe of q.probes)
        probes.push([probe.step, new Set((await runner.listing(probe.selection)).items.ids())]);
    }
    const exclusion = ruleExclusion(ctx, p);
    const run: ChunkRun = { exclusion, probes, add: (o) => addOutcome(result, o), drop, release };
    let done = 0;
    for (let at = 0; at < listing.items.length; at += CHUNK) {
      const chunk = listing.items.slice(at, at + CHUNK);
      await evaluateChunk(ctx, p, chunk, run);
      done += chunk.length;
      ctx.onProgress?.({ rule: rule.name, done, total: Math.max(done, listing.items.length) });
    }
  } catch (err) {
    ctx.fail(rule, result, err);
  }
}

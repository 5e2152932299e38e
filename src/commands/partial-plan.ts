/**
 * A partial plan (`plan --max-duration … --partial`, docs/operating.md "A partial plan"): the rules that finished
 * before the deadline as planned, and the rules it cut planned again from what the state's last checkpoint holds
 * (src/state/held.ts), never from the service and never from data older than this run. A cut rule is complete when
 * none of its workflows lacked anything it read, partial (named, with how many instances of how many it covers)
 * when it was planned over the part of its selection the sync holds, and cut (no changes, no report) when the state
 * could not answer it, or when it has a limit, which only the whole selection can judge.
 */
import type { ApiClient } from "../api/index.js";
import { runPlan, type RunPlanOptions } from "../engine/plan-live.js";
import { resolveConflicts } from "../engine/conflicts.js";
import { selectQuery } from "../engine/select.js";
import { MUTATING_KINDS } from "../actions/index.js";
import type { Plan, PlanError, PlannedChange } from "../plan/types.js";
import type { RuleSet } from "../rules/types.js";
import {
  HeldClient,
  HeldMemo,
  heldCount,
  lacking,
  type RunState,
  type StateIndex,
  type SyncProgress,
} from "../state/index.js";

/**
 * The plan of a run cut by --max-duration with --partial, as far as it got: the rules the deadline cut (their api
 * errors) leave the errors and are named in `partial`, with how far the sync got; everything else is the plan as made.
 */
export function asPartial<P extends Plan>(plan: P, sync: SyncProgress | undefined, cut: string[]): P {
  const cutSet = new Set(cut);
  const kept = plan.errors.filter((e) => !(e.code === "api" && e.rule !== undefined && cutSet.has(e.rule)));
  const { format_version, flowrules_version, created_at, ...rest } = plan;
  return {
    format_version,
    flowrules_version,
    created_at,
    partial: {
      synced: sync?.synced ?? null,
      total: sync?.total ?? null,
      workflows: sync?.perWorkflow ?? [],
      rules_cut: [...cutSet],
    },
    ...rest,
    errors: kept,
    summary: { ...plan.summary, errors: kept.length },
  } as P;
}

export interface PartialInputs {
  /** the plan as the deadline left it */
  plan: Plan;
  sync: SyncProgress | undefined;
  /** the rules the deadline cut */
  cut: string[];
  ruleSet: RuleSet;
  state: RunState | undefined;
  /** what the live run answered that the state does not keep */
  memo: HeldMemo | undefined;
  live: ApiClient;
  /** the run's now: the state's answers are as of it */
  now: Date | undefined;
  run: Pick<RunPlanOptions, "optOutTag" | "shard" | "catalog">;
}

/** At most this many passes: each leaves out the instances whose data the rules asked for is not all held. */
const PASSES = 4;

/** The partial plan, with the cut rules planned from the state where that is sound. */
export async function partialPlan(i: PartialInputs): Promise<Plan> {
  const base = asPartial(i.plan, i.sync, i.cut);
  if (!i.state || !i.memo || !i.now || i.cut.length === 0) return base;
  const index = await i.state.reopen();
  if (!index) return base;
  try {
    return await fromState(i, base, index, i.memo, i.now);
  } catch {
    return base; // the state could not answer: the cut rules stay cut, as without it
  } finally {
    await index.close();
  }
}

async function fromState(i: PartialInputs, base: Plan, index: StateIndex, memo: HeldMemo, now: Date): Promise<Plan> {
  const nowIso = now.toISOString();
  // answers as of this run only: a workflow whose bookmark is an older run's holds answers carried from its look
  const usable = (pid: number): boolean => index.marks[String(pid)]?.run_at === nowIso;
  const cutSet = new Set(i.cut);
  const ruleSet: RuleSet = { ...i.ruleSet, rules: i.ruleSet.rules.filter((r) => cutSet.has(r.name)) };
  const drop = new Set<number>();
  let client: HeldClient;
  let held: Plan;
  for (let pass = 1; ; pass++) {
    client = new HeldClient(i.live, index, memo, usable, drop);
    held = await runPlan({ client, ruleSet, now, ...i.run });
    if (!client.missed || pass === PASSES) break;
    const before = drop.size;
    await lacking(index, client.asked, drop);
    if (drop.size === before) break;
  }
  const partialIn = client.partial;
  const failed = new Set(held.errors.filter((e) => e.code === "api" && e.rule).map((e) => e.rule as string));
  const rulesPartial: NonNullable<NonNullable<Plan["partial"]>["rules_partial"]> = [];
  const stillCut = new Set<string>();
  for (const name of i.cut) {
    const entry = held.rules.find((r) => r.name === name);
    const rule = ruleSet.rules.find((r) => r.name === name);
    if (!entry || !rule || failed.has(name)) {
      stillCut.add(name);
      continue;
    }
    const workflows = entry.workflow_id !== null ? [entry.workflow_id] : (entry.workflow_ids ?? []);
    const partial = entry.workflow_id === null ? partialIn.size > 0 : workflows.some((w) => partialIn.has(w));
    if (!partial) continue;
    const counted =
      entry.workflow_id === null ? null : heldCount(index, entry.workflow_id, selectQuery(rule.select, now));
    const total = counted === null ? null : Math.max(counted, entry.selected);
    // all of the selection the service counted was planned: nothing of it was left out
    if (total !== null && entry.selected >= total) continue;
    // a limit is judged over the whole selection: over part of it, only a selection the service counted within it
    // (or a part already over max_instances, which the whole would be too) is judged as the whole would be
    const bound = Math.min(rule.limits.max_instances ?? Infinity, rule.limits.max_changes_per_run ?? Infinity);
    const over = held.errors.some((e) => e.rule === name && e.code === "limit");
    if (bound !== Infinity && !over && (total === null || total > bound)) {
      stillCut.add(name);
      continue;
    }
    rulesPartial.push({ rule: name, selected: entry.selected, total });
  }
  const planned = (rule: string): boolean => cutSet.has(rule) && !stillCut.has(rule);
  return merged(base, held, planned, stillCut, rulesPartial);
}

/** The plan as made, with the rules planned from the state added; a clash with another rule's change is a conflict. */
function merged(
  base: Plan,
  held: Plan,
  planned: (rule: string) => boolean,
  stillCut: Set<string>,
  rulesPartial: NonNullable<NonNullable<Plan["partial"]>["rules_partial"]>,
): Plan {
  const added = held.changes.filter((c) => planned(c.rule));
  const all = [...base.changes, ...added];
  // conflicts between the rules planned from the state and the others, judged as a complete plan judges them
  const touched = new Set(added.map((c) => c.instance_id));
  const resolved = resolveConflicts(all.filter((c) => c.audit !== true && touched.has(c.instance_id)));
  const kept = new Set<PlannedChange>(resolved.changes);
  const changes = all.filter((c) => c.audit === true || !touched.has(c.instance_id) || kept.has(c));
  const known = new Set(base.errors.map((e) => JSON.stringify(e)));
  const conflictErrors = resolved.errors.filter((e) => !known.has(JSON.stringify(e)));
  const heldErrors = held.errors.filter((e) => planned(e.rule ?? "") && !(e.code === "api"));
  const errors: PlanError[] = [...base.errors, ...heldErrors, ...conflictErrors];
  const count = (rule: string): number => changes.filter((c) => c.rule === rule).length;
  const dropped = all.length - changes.length;
  const rules = base.rules.map((r) => {
    const fromState = planned(r.name) ? held.rules.find((h) => h.name === r.name) : undefined;
    const entry = fromState ?? r;
    return dropped > 0 ? { ...entry, changes: Math.min(entry.changes, count(r.name)) } : entry;
  });
  const reports = [...base.reports.filter((r) => !planned(r.rule)), ...held.reports.filter((r) => planned(r.rule))];
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = changes.filter((c) => c.kind === k).length;
  const skipped = rules.reduce((n, r) => n + r.skipped, 0);
  // names of workflows only the rules planned from the state show
  const named = new Set((base.names ?? []).map((n) => n.workflow_id));
  const names = [...(base.names ?? []), ...(held.names ?? []).filter((n) => !named.has(n.workflow_id))];
  const partial = base.partial ?? { synced: null, total: null, workflows: [], rules_cut: [] };
  return {
    ...base,
    partial: {
      ...partial,
      rules_cut: partial.rules_cut.filter((r) => stillCut.has(r)),
      ...(rulesPartial.length > 0 ? { rules_partial: rulesPartial } : {}),
    },
    rules,
    changes,
    reports,
    errors,
    summary: {
      ...base.summary,
      ...byKind,
      reports: reports.length,
      errors: errors.length,
      ...(skipped > 0 ? { skipped } : {}),
    },
    ...(names.length > 0 ? { names } : {}),
  };
}

/**
 * The live planning pipeline: resolve → select (cursor pages of 500) → hydrate → evaluate → assemble. Everything
 * that touches the network goes through the API client; the plan itself comes from the pure functions.
 */
import { actionKind } from "../actions/index.js";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, FieldRef, RuleSet } from "../rules/types.js";
import { VERSION } from "../model/version.js";
import { newAlmanac } from "./almanac.js";
import { addOutcome, assemblePlan, newRuleResult, type RuleResult } from "./assemble.js";
import { planBindings } from "./context.js";
import { evaluateInstance } from "./evaluate-instance.js";
import { hydratePage } from "./hydrate.js";
import type { Plan, PlanError } from "../plan/types.js";
import { prefetch } from "./prefetch.js";
import { resolveWorkflows } from "./resolve.js";
import { selectQuery, stepsToProbe, type ListQuery } from "./select.js";
import { exclusionFilter } from "./exclusions.js";
import { inactiveRules } from "./active-rules.js";

export interface PlanProgress {
  rule: string;
  /** instances of this rule's selection processed so far */
  done: number;
  /** total of the selection, from the first page's `count` */
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
  /** instances carrying this tag are changed by no rule (README.md, "Operating rules in production"); undefined = off */
  optOutTag?: string;
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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** For each step: the ids of the selected instances that have it active (same selection + active_step_id). */
async function probeActiveSteps(
  client: ApiClient,
  processId: number,
  query: ListQuery,
  steps: number[],
): Promise<Array<[number, Set<number>]>> {
  const out: Array<[number, Set<number>]> = [];
  for (const step of steps) {
    const ids = new Set<number>();
    for await (const item of client.instances(processId, { ...query, active_step_id: step })) ids.add(item.id);
    out.push([step, ids]);
  }
  return out;
}

export async function runPlan(opts: RunPlanOptions): Promise<Plan> {
  const { client, ruleSet } = opts;
  const now = opts.now ?? new Date();
  const nowIso = now.toISOString();
  const bindings = planBindings(now);
  const almanac = newAlmanac();
  const errors: PlanError[] = [];
  const results: RuleResult[] = [];

  // a rule outside its active window sends no request at all, not even to resolve its workflow
  const inactive = inactiveRules(ruleSet.rules, now);
  const running = ruleSet.rules.filter((r) => !inactive.has(r.name));
  let resolved;
  try {
    resolved = await resolveWorkflows(client, running);
  } catch (err) {
    resolved = new Map(running.map((r) => [r.name, { error: `rule "${r.name}": ${errorMessage(err)}` }]));
  }

  // records are kept for reuse only when several rules of one workflow read them
  const recordReaders = new Map<number, number>();
  for (const rule of ruleSet.rules) {
    const r = resolved.get(rule.name);
    if (r && "id" in r && rule.needs.record) recordReaders.set(r.id, (recordReaders.get(r.id) ?? 0) + 1);
  }

  for (const rule of ruleSet.rules) {
    const off = inactive.get(rule.name);
    if (off) {
      results.push({ ...newRuleResult(rule, typeof rule.workflow === "object" && "id" in rule.workflow ? rule.workflow.id : null), inactive: off });
      continue;
    }
    const r = resolved.get(rule.name);
    if (!r || "error" in r) {
      errors.push({ code: "resolve", rule: rule.name, message: r && "error" in r ? r.error : `rule "${rule.name}": unresolved` });
      results.push(newRuleResult(rule, null));
      continue;
    }
    const result = newRuleResult(rule, r.id, r.name);
    // a rule's own `exclude` is always counted; the opt-out tag only shows when it excluded something
    if (rule.exclude) result.excluded = 0;
    results.push(result);
    const needs = {
      processId: r.id,
      record: rule.needs.record,
      cacheRecords: (recordReaders.get(r.id) ?? 0) > 1,
      fields: fieldRefs(rule),
    };
    try {
      const query = selectQuery(rule.select, now);
      const probes = needs.record ? [] : await probeActiveSteps(client, r.id, query, stepsToProbe(rule));
      const exclusion = exclusionFilter(client, rule, r.id, query, opts.optOutTag);
      let done = 0;
      for await (const page of prefetch(client.instancePages(r.id, query))) {
        const inShard = opts.shard
          ? page.results.filter((i) => i.id % (opts.shard?.count ?? 1) === (opts.shard?.index ?? 0))
          : page.results;
        // excluded instances are counted as selected and never evaluated (nor hydrated, when known before)
        const out = await exclusion.excluded(inShard.map((i) => i.id));
        const items = inShard.filter((i) => !out.has(i.id));
        const hydrated = await hydratePage(client, almanac, items, needs);
        const data = hydrated.filter((d) => !(d.record && exclusion.excludedByRecord(d.id, d.record.tags)));
        const excluded = inShard.length - data.length;
        if (excluded > 0) {
          result.selected += excluded;
          result.excluded = (result.excluded ?? 0) + excluded;
        }
        for (const d of data) {
          if (probes.length > 0) d.stepActive = new Map(probes.map(([step, ids]) => [step, ids.has(d.id)]));
        }
        for (const d of data) addOutcome(result, await evaluateInstance(rule, d, nowIso, bindings));
        done += page.results.length;
        opts.onProgress?.({ rule: rule.name, done, total: page.count ?? done });
      }
    } catch (err) {
      // an API failure fails this rule's plan (none of its changes), the others are still planned
      result.changes = [];
      result.reportEntries.clear();
      errors.push({ code: "api", rule: rule.name, message: `rule "${rule.name}": ${errorMessage(err)}` });
    }
  }

  return assemblePlan(results, {
    createdAt: now,
    baseUrl: client.baseUrl,
    rulesDigest: ruleSet.digest,
    version: VERSION,
    requests: client.stats().total,
    errors,
  });
}

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
import { fitRule } from "./structure-fit.js";
import { structureReader } from "./structure.js";
import type { WorkflowStructure } from "../model/structure.js";

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
  /** the committed workflow catalog, if any: the live structure is compared with it */
  catalog?: WorkflowStructure[];
  /** one line per warning (drift from the catalog, a structure that cannot be read) */
  onWarning?: (message: string) => void;
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

  let resolved;
  try {
    resolved = await resolveWorkflows(client, ruleSet.rules);
  } catch (err) {
    resolved = new Map(ruleSet.rules.map((r) => [r.name, { error: `rule "${r.name}": ${errorMessage(err)}` }]));
  }

  // records are kept for reuse only when several rules of one workflow read them
  const recordReaders = new Map<number, number>();
  for (const rule of ruleSet.rules) {
    const r = resolved.get(rule.name);
    if (r && "id" in r && rule.needs.record) recordReaders.set(r.id, (recordReaders.get(r.id) ?? 0) + 1);
  }

  const structures = structureReader(client);
  const warned = new Set<string>();
  const warn = (m: string): void => {
    if (warned.has(m)) return;
    warned.add(m);
    opts.onWarning?.(m);
  };

  for (const written of ruleSet.rules) {
    const r = resolved.get(written.name);
    if (!r || "error" in r) {
      errors.push({ code: "resolve", rule: written.name, message: r && "error" in r ? r.error : `rule "${written.name}": unresolved` });
      results.push(newRuleResult(written, null));
      continue;
    }
    // steps and fields are checked against the live structure (names resolved to ids) before any selection
    const fit = await fitRule(written, r.id, structures, opts.catalog);
    fit.warnings.forEach(warn);
    errors.push(...fit.errors);
    const rule = fit.rule ?? written;
    const result = newRuleResult(rule, r.id, r.name);
    results.push(result);
    if (!fit.rule) continue;
    const needs = {
      processId: r.id,
      record: rule.needs.record,
      cacheRecords: (recordReaders.get(r.id) ?? 0) > 1,
      fields: fieldRefs(rule),
    };
    try {
      const query = selectQuery(rule.select, now);
      const probes = needs.record ? [] : await probeActiveSteps(client, r.id, query, stepsToProbe(rule));
      let done = 0;
      for await (const page of prefetch(client.instancePages(r.id, query))) {
        const items = opts.shard
          ? page.results.filter((i) => i.id % (opts.shard?.count ?? 1) === (opts.shard?.index ?? 0))
          : page.results;
        const data = await hydratePage(client, almanac, items, needs);
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

/**
 * The flowrules side of the benchmark: the engine's own live pipeline (`runPlan`) on the scenario's rules, the plan
 * written to a file as `flowrules plan --out` does, then the apply engine on that file — exactly what a scheduler's
 * `flowrules plan --out plan.json && flowrules apply plan.json` does, minus the CLI's argument parsing and output.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createClient } from "../api/index.js";
import { runPlan } from "../engine/run-plan.js";
import type { Plan } from "../engine/plan-types.js";
import { writePlanFile } from "../commands/plan.js";
import { compileSources } from "../rules/index.js";
import type { RuleSet } from "../rules/types.js";
import { applyPlanFile } from "./apply-adapter.js";
import { API_KEY, RULES_FILE, RULES_YAML } from "./scenario.js";
import { RssSampler, type PhaseHook, type SideResult } from "./side.js";

export interface FlowrulesSideOptions {
  baseUrl: string;
  /** requests in flight at once (the client's default is 4) */
  concurrency: number;
  /** where the plan file and the apply journal go */
  workDir: string;
  /** the rules to run; the scenario's by default */
  rulesYaml?: string;
}

export function compileBenchRules(yaml = RULES_YAML): RuleSet {
  const loaded = compileSources([{ file: RULES_FILE, text: yaml }]);
  if (!loaded.ruleSet) {
    const errors = loaded.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.line}:${d.col} ${d.message}`);
    throw new Error(`the benchmark's rules do not load:\n${errors.join("\n")}`);
  }
  return loaded.ruleSet;
}

function countKinds(plan: Plan): { completes: number; aborts: number } {
  let completes = 0;
  let aborts = 0;
  for (const c of plan.changes) {
    if (c.kind === "complete_step") completes += 1;
    else if (c.kind === "abort") aborts += 1;
  }
  return { completes, aborts };
}

export async function runFlowrules(opts: FlowrulesSideOptions, onPhase: PhaseHook): Promise<SideResult> {
  const sampler = new RssSampler();
  const ruleSet = compileBenchRules(opts.rulesYaml);
  const phases: SideResult["phases"] = [];

  let t0 = performance.now();
  const client = createClient({ baseUrl: opts.baseUrl, apiKey: API_KEY, rateLimitPerMin: 0, concurrency: opts.concurrency });
  let plan: Plan;
  try {
    plan = await runPlan({ client, ruleSet });
  } finally {
    await client.close();
  }
  if (plan.errors.length > 0) throw new Error(`the plan has errors: ${plan.errors.map((e) => e.message).join("; ")}`);
  const planFile = join(opts.workDir, "plan.json");
  await writePlanFile(planFile, plan);
  phases.push({ phase: "plan", wallMs: performance.now() - t0, peakRssBytes: sampler.peak(), maxRssBytes: sampler.maxRss() });
  await onPhase("plan");

  t0 = performance.now();
  const applied = await applyPlanFile({
    planFile,
    workDir: opts.workDir,
    baseUrl: opts.baseUrl,
    apiKey: API_KEY,
    concurrency: opts.concurrency,
  });
  phases.push({ phase: "apply", wallMs: performance.now() - t0, peakRssBytes: sampler.peak(), maxRssBytes: sampler.maxRss() });
  await onPhase("apply");
  sampler.stop();

  return {
    side: "flowrules",
    phases,
    maxRssBytes: sampler.maxRss(),
    outcome: { ...countKinds(plan), failed: applied.exitCode === 0 ? 0 : 1, applySummary: applied.summary },
  };
}

/**
 * The flowrules side of the benchmark: the engine's own live pipeline (`runPlan`) on the scenario's rules, the plan
 * written to a file as `flowrules plan --out` does, then the apply engine on that file — what a scheduler's
 * `flowrules plan --out plan.json && flowrules apply plan.json` does, minus the CLI's argument parsing and output.
 * The two steps are separate functions so each can run in its own process, as those two commands do.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createClient } from "#flowrules/api/index.js";
import { runPlan } from "#flowrules/engine/plan-live.js";
import type { Plan } from "#flowrules/plan/types.js";
import { writePlanFile } from "#flowrules/plan/write.js";
import { compileSources } from "#flowrules/rules/index.js";
import type { RuleSet } from "#flowrules/rules/types.js";
import { applyPlanFile } from "./apply-adapter.js";
import { API_KEY, RULES_FILE, RULES_YAML } from "./scenario.js";
import { RssSampler, type PhaseHook, type PhaseResult, type SideResult } from "./side.js";

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
    const errors = loaded.diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.line}:${d.col} ${d.message}`);
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

const planFileIn = (workDir: string): string => join(workDir, "plan.json");

export interface PlanStepResult {
  phase: PhaseResult;
  completes: number;
  aborts: number;
}

/** `flowrules plan --out plan.json`: the live pipeline, then the plan file written as the CLI writes it. */
export async function planStep(opts: FlowrulesSideOptions): Promise<PlanStepResult> {
  const sampler = new RssSampler();
  const ruleSet = compileBenchRules(opts.rulesYaml);
  const t0 = performance.now();
  const client = createClient({
    baseUrl: opts.baseUrl,
    apiKey: API_KEY,
    rateLimitPerMin: 0,
    concurrency: opts.concurrency,
  });
  let plan: Plan;
  try {
    plan = await runPlan({ client, ruleSet });
  } finally {
    await client.close();
  }
  if (plan.errors.length > 0) throw new Error(`the plan has errors: ${plan.errors.map((e) => e.message).join("; ")}`);
  await writePlanFile(planFileIn(opts.workDir), plan);
  const phase: PhaseResult = {
    phase: "plan",
    wallMs: performance.now() - t0,
    peakRssBytes: sampler.peak(),
    maxRssBytes: sampler.maxRss(),
  };
  sampler.stop();
  return { phase, ...countKinds(plan) };
}

export interface ApplyStepResult {
  phase: PhaseResult;
  exitCode: number;
  summary: string;
}

/** `flowrules apply plan.json` on the file planStep wrote. */
export async function applyStep(opts: FlowrulesSideOptions): Promise<ApplyStepResult> {
  const sampler = new RssSampler();
  const t0 = performance.now();
  const applied = await applyPlanFile({
    planFile: planFileIn(opts.workDir),
    workDir: opts.workDir,
    baseUrl: opts.baseUrl,
    apiKey: API_KEY,
    concurrency: opts.concurrency,
  });
  const phase: PhaseResult = {
    phase: "apply",
    wallMs: performance.now() - t0,
    peakRssBytes: sampler.peak(),
    maxRssBytes: sampler.maxRss(),
  };
  sampler.stop();
  return { phase, exitCode: applied.exitCode, summary: applied.summary };
}

export function sideResult(plan: PlanStepResult, apply: ApplyStepResult): SideResult {
  return {
    side: "flowrules",
    phases: [plan.phase, apply.phase],
    maxRssBytes: Math.max(plan.phase.maxRssBytes, apply.phase.maxRssBytes),
    outcome: {
      completes: plan.completes,
      aborts: plan.aborts,
      failed: apply.exitCode === 0 ? 0 : 1,
      applySummary: apply.summary,
    },
  };
}

/** Both steps in this process (in-process mode: the RSS figures then include everything else in it). */
export async function runFlowrules(opts: FlowrulesSideOptions, onPhase: PhaseHook): Promise<SideResult> {
  const plan = await planStep(opts);
  await onPhase("plan");
  const apply = await applyStep(opts);
  await onPhase("apply");
  return sideResult(plan, apply);
}

/**
 * The library entry (package.json "main"/"exports"): the API the README documents, re-exported from where it lives.
 * Rules: load and validate; plan: the live planner against a service and the offline one over given instances;
 * apply: the whole `flowrules apply` (lock, journal, checks); the sandbox for trying it all locally.
 */
export { loadRules, compileSources, type LoadOptions, type RuleSource } from "./rules/index.js";
export type { Diagnostic, LoadResult, RuleSet, CompiledRule } from "./rules/types.js";
export { createClient, type ApiClient } from "./api/index.js";
export { runPlan, type RunPlanOptions } from "./engine/plan-live.js";
export { planFromInstances } from "./engine/plan-offline.js";
export type { Plan, PlannedChange, PlannedReport, PlanSummary } from "./plan/types.js";
export { writePlanFile } from "./plan/write.js";
export { loadPlanForApply as loadPlanFile } from "./apply/load.js";
export type { PlanFile } from "./plan/types.js";
export { applyCommand, type ApplyCommandOptions } from "./commands/apply.js";
export { processIO, type CommandIO } from "./log/command-io.js";
export { startSandbox, type RunningSandbox, type SandboxOptions } from "./sandbox/index.js";
export { VERSION } from "./model/version.js";

/** What an action module receives to plan one matched instance, and the pieces of output it owns. */
import type { CompiledAction, CompiledRule } from "../rules/types.js";
import type { Bindings, EvalContext } from "../engine/context.js";
import type { InstanceData } from "./instance.js";
import type { PlannedChange } from "../plan/types.js";

export interface ActionPlanInput<A extends CompiledAction = CompiledAction> {
  rule: CompiledRule;
  action: A;
  data: InstanceData;
  ctx: EvalContext;
  bindings: Bindings;
}

/**
 * The result of planning one action on one matched instance: a change, or a reason it does not apply
 * (instance not running, step not active) that the plan shows as skipped rather than failing.
 */
export type ActionOutcome = { change: PlannedChange } | { skipped: string };

/** How a mutating kind presents itself in renderers: one symbol, a legend entry, and its summary phrase. */
export interface KindPresentation {
  symbol: string;
  legend: string;
  /** e.g. n => `${n} steps to complete` */
  summary: (n: number) => string;
  /** colour name for TTY output */
  colour: "green" | "yellow" | "red" | "cyan";
}

/** The registry of action kinds. A new kind is a new module here; nothing else enumerates them. */
import * as completeStep from "./complete_step.js";
import * as saveStep from "./save_step.js";
import * as abort from "./abort.js";
import * as report from "./report.js";
import type { MutatingKind } from "../rules/types.js";
import type { KindPresentation } from "./types.js";

export const ACTION_MODULES = [completeStep, saveStep, abort, report] as const;
export const ACTION_KINDS = ACTION_MODULES.map((m) => m.kind);

/** Mutating kinds in the order summaries list them. */
export const MUTATING_KINDS: readonly MutatingKind[] = ["complete_step", "save_step", "abort"];

export const PRESENTATION: Record<MutatingKind, KindPresentation> = {
  complete_step: completeStep.presentation,
  save_step: saveStep.presentation,
  abort: abort.presentation,
};

export { completeStep, saveStep, abort, report };

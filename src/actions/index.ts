/**
 * The registry of action kinds. A new kind is a new module and one entry in ACTIONS (./kinds.ts); every other part of
 * flowrules (schema, compiler, planner, conflicts, renderers, apply, plan-file checks, rule tests) reads it from here.
 */
import { ACTIONS } from "./kinds.js";
import type { PlannedChange } from "../plan/types.js";
import type { BatchWords, ChangeIssue, MutatingActionKind, ReportActionKind } from "./types.js";
import type { JsonSchema } from "./schema-types.js";

export { ACTIONS };

type AnyKind = (typeof ACTIONS)[number];
/** The compiled form of an `actions:` entry, one variant per kind. */
export type CompiledAction = NonNullable<ReturnType<AnyKind["compile"]>>;
export type ActionKindName = AnyKind["kind"];
export type MutatingKind = Extract<AnyKind, { mutating: true }>["kind"];
export type MutatingAction = Extract<CompiledAction, { kind: MutatingKind }>;

// eslint-style wide views of the registry: a kind's module typed by its own action, used through its kind name
type WideMutating = MutatingActionKind<string, { kind: string; pos: CompiledAction["pos"] }>;
type WideReport = ReportActionKind<string, { kind: string; pos: CompiledAction["pos"] }>;

/**
 * The alternatives of one `actions:` entry, flat, each named: a kind's mapping form as `action_<kind>`, its bare word
 * (`- abort`) as `action_<kind>_word`, mappings first and words last. yaml-language-server, completing a list item,
 * drops the alternatives listed before a nested anyOf or a bare-word one, which hid complete_step and save_step from
 * editors (test/editor/language-server.test.ts drives the real server).
 */
export function actionAlternatives(): Array<{ name: string; schema: JsonSchema }> {
  const flat = ACTIONS.flatMap((m) =>
    (Array.isArray(m.schema.anyOf) ? (m.schema.anyOf as JsonSchema[]) : [m.schema]).map((schema) => ({
      name: schema.type === "object" ? `action_${m.kind}` : `action_${m.kind}_word`,
      schema,
    })),
  );
  return [...flat.filter((a) => a.schema.type === "object"), ...flat.filter((a) => a.schema.type !== "object")];
}

export const ACTION_KINDS: readonly ActionKindName[] = ACTIONS.map((m) => m.kind);
export const MUTATING_KINDS: readonly MutatingKind[] = ACTIONS.flatMap((m) => (m.mutating ? [m.kind] : []));

const byName = new Map<string, WideMutating | WideReport>(
  ACTIONS.map((m) => [m.kind, m as unknown as WideMutating | WideReport]),
);

/** The module of a kind a plan or a rule names; throws for a kind this version does not know (never a default). */
export function actionKind(kind: string): WideMutating | WideReport {
  const m = byName.get(kind);
  if (!m) throw new Error(`unknown action kind "${kind}" (this flowrules knows ${ACTION_KINDS.join(", ")})`);
  return m;
}

/** The module of a mutating kind, as named by a planned change. */
export function mutatingKind(kind: string): WideMutating {
  const m = actionKind(kind);
  if (!m.mutating) throw new Error(`"${kind}" makes no change`);
  return m;
}

export function isMutating(a: CompiledAction): a is MutatingAction {
  return actionKind(a.kind).mutating;
}

/** The words of a batch kind's messages; a kind sent one request each is never `not_acted`, but reads sensibly too. */
export function batchWords(kind: string): BatchWords {
  const send = mutatingKind(kind).send;
  return send.mode === "batch" ? send.words : { request: `${kind} request`, done: "acted on", notDone: "not acted on" };
}

/** Position of a kind in ACTIONS: the order of changes of one instance and of summary counts. */
export function kindOrder(kind: string): number {
  return ACTION_KINDS.indexOf(kind as ActionKindName);
}

export { abort } from "./abort.js";
export { completeStep } from "./complete_step.js";
export { report } from "./report.js";
export { saveStep } from "./save_step.js";
export type { ReportAction } from "./report.js";
export type { AbortAction } from "./abort.js";
export type { StepAction } from "./step-kind.js";
export * from "./types.js";
export { ReportEntries } from "./report-entries.js";

/**
 * A plan-file change as apply must find it: of a mutating kind this version knows, with a request that says exactly
 * what its kind, instance and step say (each kind checks its own).
 */
export function checkPlannedChange(change: PlannedChange, issue: ChangeIssue): void {
  const m = byName.get(change.kind);
  if (!m || !m.mutating) {
    issue(["kind"], `unknown kind "${change.kind}"; this flowrules applies ${MUTATING_KINDS.join(", ")}`);
    return;
  }
  m.checkChange(change, issue);
}

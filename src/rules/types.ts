/**
 * The compiled form of a rule set: what `loadRules` hands to the engine. Everything here is validated and compiled;
 * the engine never sees raw YAML. The action union is derived from the action registry (src/actions/index.ts); what
 * is kept as written (mode, exclusions, limits) is typed by the rule file's one shape (./schema.ts).
 */
import type { CompiledAction } from "../actions/index.js";
import type { CompiledExpr, FieldRef, RuleNeeds, SelectSpec, SourcePos, Diagnostic } from "../model/rule-types.js";
import type { ActiveWindow } from "./active-window.js";
import type { StructureRef } from "./structure-ref.js";
import type { RuleInput } from "./schema.js";

export type {
  CompiledExpr, CompiledValue, Diagnostic, FieldRef, RuleNeeds, SelectSpec, Severity, SourcePos, StepInput,
} from "../model/rule-types.js";
export type { ActionKindName, CompiledAction, MutatingKind } from "../actions/index.js";
export type { ActiveWindow } from "./active-window.js";

/** enforce: apply sends the rule's changes; audit: they are planned and shown, never sent */
export type RuleMode = NonNullable<RuleInput["mode"]>;

/** instances never matched by the rule (both lists present, perhaps empty) */
export type RuleExclusions = Required<NonNullable<RuleInput["exclude"]>>;

/** A workflow as a rule names it. */
export type WorkflowRef = { id: number } | { name: string };

export interface CompiledRule {
  name: string;
  description?: string;
  pos: SourcePos;
  /** one workflow (an id or a name); a rule over several has `workflows` too, and this is the first of them */
  workflow: WorkflowRef;
  /** several workflows (a list as written, or every workflow the key sees: "*"), resolved per run */
  workflows?: WorkflowRef[] | "*";
  fields: Record<string, FieldRef>;
  select: SelectSpec;
  when?: CompiledExpr;
  actions: CompiledAction[];
  limits: NonNullable<RuleInput["limits"]>;
  needs: RuleNeeds;
  /** audit: planned and shown, never sent (absent = enforce) */
  mode?: RuleMode;
  /** instances this rule never matches */
  exclude?: RuleExclusions;
  /** when the rule runs at all */
  active?: ActiveWindow;
  /**
   * Every step and form-field reference, as written (id or name). A name stands in `fields`, `select` and `actions`
   * as a negative key until structure-checks.ts resolves it against the workflow; a rule with names is planned only
   * after that.
   */
  structure?: StructureRef[];
}

export interface RuleSet {
  rules: CompiledRule[];
  /** the files read, in order */
  files: string[];
  /** sha256 over the files' contents, in order: ties a plan to the rules it came from */
  digest: string;
}

export interface LoadResult {
  /** present only when there are no error diagnostics */
  ruleSet?: RuleSet;
  diagnostics: Diagnostic[];
}

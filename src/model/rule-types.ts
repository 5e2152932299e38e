/**
 * Shared shapes of compiled rules that every layer may read: source positions and diagnostics, compiled JSONata and
 * templated values, field references and the static needs of a rule.
 */
import type { Expression } from "jsonata";

/** A position in a rule file (1-based line and column), for every message that points at the source. */
export interface SourcePos {
  file: string;
  line: number;
  col: number;
}

export type Severity = "error" | "warning";

/**
 * A problem found while loading. `line`/`col` are 0 when it has no place inside a file (a missing path); `file` is ""
 * when it concerns no file at all (an unknown `--rule` name).
 */
export interface Diagnostic extends SourcePos {
  severity: Severity;
  /** a short stable code, e.g. "schema", "yaml", "jsonata", "unknown-field", "duplicate-name", "conflict" */
  code: string;
  message: string;
  rule?: string;
}

/** What a synchronous evaluator returns when JSONata itself must evaluate this input (src/rules/jsonata-fast.ts). */
export const SLOW: unique symbol = Symbol("slow");

/** A synchronous evaluation of an expression: exactly JSONata's result, or SLOW. */
export type FastEval = (input: unknown, bindings: Record<string, unknown>) => unknown;

/** A JSONata expression compiled once at load time. */
export interface CompiledExpr {
  source: string;
  expr: Expression;
  /** the same expression evaluated without JSONata's asynchronous machinery, when it is simple enough */
  fast?: FastEval;
  pos: SourcePos;
}

/**
 * An action input value with its `{{ }}` templates compiled. A string that is exactly one `{{ expr }}` is `whole`
 * and takes the result's own type; otherwise each part is stringified and concatenated.
 */
export type CompiledValue =
  | { t: "literal"; value: unknown }
  | { t: "template"; whole: boolean; parts: Array<string | CompiledExpr> }
  | { t: "array"; items: CompiledValue[] }
  | { t: "object"; entries: Array<[string, CompiledValue]> };

export interface StepInput {
  /** form field (action) id */
  action: number;
  value: CompiledValue;
}

export interface FieldRef {
  step: number;
  action: number;
}

/**
 * `select` as written (keys are the query parameters of the v2 instance list, verbatim). Date-time values may still be `now` or
 * a signed ISO 8601 duration; the engine resolves them once, at the plan's start.
 */
export type SelectSpec = Record<string, string | number | boolean | Array<string | number>>;

/** What a rule reads beyond the list element, found statically from its expressions and templates. */
export interface RuleNeeds {
  /** field aliases read by `when`, templates or the actions' record keys (a report's columns and group_by) */
  fields: string[];
  /**
   * true when an expression reads anything of the full instance record (instance.*, snapshot, tags, or a report
   * column / group_by from the record), so the instance must be read with GET /instances/{id}/
   */
  record: boolean;
  /**
   * an expression calls `$waitingSince`, `$waitingDays` or `$waitingHours`: the record is read with step completion
   * times (`steps_time_frame=true`); absent otherwise
   */
  times?: true;
}

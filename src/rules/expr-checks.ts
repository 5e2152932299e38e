/** Static checks on one compiled expression: declared aliases, existing functions, names the context holds. */
import { RECORD_COLUMNS } from "../actions/report.js";
import type { CompiledExpr, Diagnostic, SourcePos } from "./types.js";
import { BUILTIN_FUNCTIONS, CONTEXT_NAMES, HELPER_FUNCTIONS, exprRefs, type ExprRefs } from "./ast-refs.js";
import { backtrackingRisk } from "./regex-safety.js";
import { closest, didYouMean } from "../text/suggest.js";

export interface ExprCheckInput {
  expr: CompiledExpr;
  /** maps an index in the compiled text to the file */
  at: (i: number) => SourcePos;
  /** the expression text as compiled (untrimmed), to which `at` and the AST positions refer */
  where: string;
  rule?: string;
  /** declared aliases; undefined when `fields` itself is broken (no alias check then) */
  aliases?: readonly string[];
}

/** A step named in a waiting helper's call (`$waitingDays("Manager approval")`), with its place in the file. */
export interface ExprStepRef {
  written: string | number;
  pos: SourcePos;
  where: string;
}

export function checkExpr(input: ExprCheckInput): { refs: ExprRefs; diagnostics: Diagnostic[]; steps: ExprStepRef[] } {
  const refs = exprRefs(input.expr.expr);
  const diagnostics: Diagnostic[] = [];
  const d = (severity: Diagnostic["severity"], code: string, at: number, message: string): void => {
    diagnostics.push({ ...input.at(at), severity, code, message, ...(input.rule !== undefined ? { rule: input.rule } : {}) });
  };
  const aliases = input.aliases;
  if (aliases !== undefined) {
    for (const f of refs.fields) {
      if (aliases.includes(f.name)) continue;
      const declared =
        aliases.length > 0 ? ` (declared: ${aliases.join(", ")})` : ' (the rule declares no aliases: add them under "fields:")';
      const hint = didYouMean(f.name, aliases);
      d("error", "unknown-field", f.at, `unknown field alias "${f.name}" in ${input.where}${hint}${declared}`);
    }
  }
  const known = new Set<string>([...BUILTIN_FUNCTIONS, ...HELPER_FUNCTIONS, ...refs.bound]);
  for (const c of refs.calls) {
    if (known.has(c.name)) continue;
    const hint = closest(c.name, [...known]);
    d(
      "error",
      "unknown-function",
      c.at,
      `unknown function "$${c.name}" in ${input.where}${hint !== undefined ? `; did you mean "$${hint}"?` : ""}`,
    );
  }
  for (const c of refs.nameCalls) {
    const hint = known.has(c.name) ? c.name : closest(c.name, [...known]);
    d(
      "error",
      "unknown-function",
      c.at,
      `"${c.name}(…)" in ${input.where} calls a name, not a function (functions start with $)` +
        (hint !== undefined ? `; did you mean "$${hint}"?` : ""),
    );
  }
  for (const { re, at } of refs.regexes) {
    const risk = backtrackingRisk(re);
    if (risk === undefined) continue;
    const shown = `/${re.source.length > 60 ? `${re.source.slice(0, 60)}…` : re.source}/${re.flags.replace("g", "")}`;
    d("error", "regex", at, `regular expression ${shown} in ${input.where} could hang on some values: ${risk}`);
  }
  for (const r of refs.unknownRoots) {
    let hint: string;
    if (aliases?.includes(r.name)) hint = `; did you mean "fields.${r.name}"?`;
    else if ((RECORD_COLUMNS as readonly string[]).includes(r.name)) hint = `; did you mean "instance.${r.name}"?`;
    else hint = didYouMean(r.name, CONTEXT_NAMES);
    d(
      "warning",
      "unknown-name",
      r.at,
      `"${r.name}" is not in the context of ${input.where}, which holds ${CONTEXT_NAMES.join(", ")}${hint}`,
    );
  }
  const steps: ExprStepRef[] = [];
  for (const w of refs.waiting) {
    if (w.step === null) {
      d("warning", "waiting-step", w.at, `the step of "$${w.name}" in ${input.where} is computed, so it cannot be checked before the run; write a step id or name`);
    } else if (w.step !== undefined) {
      steps.push({ written: w.step.written, pos: input.at(w.step.at), where: `$${w.name}(${JSON.stringify(w.step.written)}) in ${input.where}` });
    }
  }
  return { refs, diagnostics, steps };
}

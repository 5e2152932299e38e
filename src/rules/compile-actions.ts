/** Compiles the entries of `actions:` (already schema-checked) into the engine's CompiledAction. */
import { GROUP_BY_KEYS, RECORD_COLUMNS } from "../actions/report.js";
import type { CompiledAction, StepInput } from "./types.js";
import { compileValue } from "./compile-value.js";
import { posIn, report, type RuleContext } from "./compile-context.js";
import { closest } from "../model/suggest.js";

export const DEFAULT_REPORT_COLUMNS = ["id", "name", "status"] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A report key as written (`amount`, `fields.amount`, `deadline`) to its normal form (`fields.amount`, `deadline`);
 * undefined, after reporting, when it names nothing. Record keys win over an alias of the same name.
 */
function reportKey(
  key: string,
  recordKeys: readonly string[],
  ctx: RuleContext,
  rel: Array<string | number>,
  what: string,
): string | undefined {
  const aliases = ctx.aliases;
  if (key.startsWith("fields.")) {
    const alias = key.slice("fields.".length);
    if (aliases === undefined || aliases.includes(alias)) return key;
    const hint = closest(alias, aliases);
    report(
      ctx,
      "error",
      "unknown-field",
      posIn(ctx, ...rel),
      `unknown field alias "${alias}" in ${what} of ${ctx.label}` +
        (hint !== undefined ? `; did you mean "fields.${hint}"?` : "") +
        (aliases.length > 0 ? ` (declared: ${aliases.join(", ")})` : ' (the rule declares no aliases under "fields:")'),
    );
    return undefined;
  }
  if (recordKeys.includes(key)) return key;
  if (aliases?.includes(key)) return `fields.${key}`;
  if (aliases === undefined) return undefined;
  const candidates = [...recordKeys, ...aliases.map((a) => `fields.${a}`)];
  const hint = closest(key, [...candidates, ...aliases]);
  const suggestion = hint === undefined ? "" : `; did you mean "${aliases.includes(hint) ? `fields.${hint}` : hint}"?`;
  report(
    ctx,
    "error",
    "report-key",
    posIn(ctx, ...rel),
    `unknown ${what} "${key}" in ${ctx.label}${suggestion} (valid: ${recordKeys.join(", ")}` +
      (aliases.length > 0 ? `, or a field alias: ${aliases.map((a) => `fields.${a}`).join(", ")})` : ")"),
  );
  return undefined;
}

function compileReport(body: Record<string, unknown>, j: number, ctx: RuleContext): CompiledAction | undefined {
  const base = ["actions", j, "report"];
  const pos = posIn(ctx, "actions", j);
  const groupBy = typeof body.group_by === "string"
    ? reportKey(body.group_by, GROUP_BY_KEYS, ctx, [...base, "group_by"], "group_by")
    : undefined;
  const written = Array.isArray(body.columns) ? body.columns : [...DEFAULT_REPORT_COLUMNS];
  const columns: string[] = [];
  written.forEach((c: unknown, k) => {
    if (typeof c !== "string") return;
    const n = reportKey(c, RECORD_COLUMNS, ctx, [...base, "columns", k], "report column");
    if (n !== undefined) columns.push(n);
  });
  if (groupBy === undefined || columns.length !== written.length) return undefined;
  return {
    kind: "report",
    group_by: groupBy,
    columns,
    ...(typeof body.title === "string" ? { title: body.title } : {}),
    pos,
  };
}

function compileStep(
  kind: "complete_step" | "save_step",
  body: Record<string, unknown>,
  j: number,
  ctx: RuleContext,
): CompiledAction | undefined {
  if (typeof body.step !== "number") return undefined;
  const inputs: StepInput[] = [];
  let ok = true;
  const list: unknown[] = Array.isArray(body.inputs) ? body.inputs : [];
  list.forEach((inp, k) => {
    if (!isRecord(inp) || typeof inp.action !== "number") {
      ok = false;
      return;
    }
    const rel = ["actions", String(j), kind, "inputs", String(k), "value"];
    const value = compileValue(inp.value, rel, ctx, `actions[${j}].${kind}.inputs[${k}].value`);
    if (value === undefined) ok = false;
    else inputs.push({ action: inp.action, value });
  });
  if (!ok) return undefined;
  return { kind, step: body.step, inputs, pos: posIn(ctx, "actions", j) };
}

/** One entry of `actions:`; undefined when it could not be compiled (the reason is already reported). */
export function compileAction(item: unknown, j: number, ctx: RuleContext): CompiledAction | undefined {
  if (item === "abort") return { kind: "abort", pos: posIn(ctx, "actions", j) };
  if (!isRecord(item)) return undefined;
  if ("abort" in item) return { kind: "abort", pos: posIn(ctx, "actions", j) };
  const cs = item.complete_step;
  if (isRecord(cs)) return compileStep("complete_step", cs, j, ctx);
  const ss = item.save_step;
  if (isRecord(ss)) return compileStep("save_step", ss, j, ctx);
  const rp = item.report;
  if (isRecord(rp)) return compileReport(rp, j, ctx);
  return undefined;
}

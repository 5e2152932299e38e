/**
 * Schema validation of one parsed file. Actions are checked per entry against the schema of the kind they name, so
 * a typo in a report gets a report message instead of one message per action kind.
 */
import { ACTION_KINDS, ACTIONS } from "../actions/index.js";
import type { Diagnostic } from "./types.js";
import { posOfKey, posOfValue, type SourceFile } from "./positions.js";
import { ruleAt, schemaMessages, typeName, type MessageContext } from "./messages.js";
import { validateAction, validateFile } from "./validate-schema.js";
import { didYouMean } from "../text/suggest.js";
import { isRecord } from "../model/guards.js";

const ACTION_PATH = /^\/rules\/\d+\/actions\/\d+(?:\/|$)/;

export interface SchemaResult {
  diagnostics: Diagnostic[];
  /** for each rule index with schema errors, the top-level keys of the rule they are under ("" = the rule itself) */
  badKeys: Map<number, Set<string>>;
}


function actionDiagnostics(ctx: MessageContext, ruleIdx: number, actIdx: number, item: unknown): Diagnostic[] {
  const { src, data } = ctx;
  const path = ["rules", String(ruleIdx), "actions", String(actIdx)];
  const r = ruleAt(data, path);
  const label = r?.name !== undefined ? `rule "${r.name}"` : `rules[${ruleIdx}]`;
  const err = (pos: ReturnType<typeof posOfValue>, message: string, code = "schema"): Diagnostic[] => [
    { ...pos, severity: "error", code, message, ...(r?.name !== undefined ? { rule: r.name } : {}) },
  ];
  const kinds: readonly string[] = ACTION_KINDS;
  const bare: string[] = ACTIONS.flatMap((m) => (m.bare ? [m.kind] : []));
  const listed = kinds.join(", ");
  if (typeof item === "string") {
    if (bare.includes(item)) return [];
    if (kinds.includes(item)) {
      return err(posOfValue(src, path), `action "${item}" in ${label} needs its options: write "- ${item}: { ... }"`);
    }
    return err(posOfValue(src, path), `unknown action "${item}" in ${label}${didYouMean(item, kinds) || `; expected one of: ${listed}`}`, "unknown-action");
  }
  if (!isRecord(item)) {
    return err(posOfValue(src, path), `action in ${label} must be ${bare.map((k) => `"${k}"`).join(" or ")} or a mapping with one of ${listed}, not ${typeName(item)}`);
  }
  const keys = Object.keys(item);
  const known = keys.filter((k) => kinds.includes(k));
  if (known.length === 0) {
    const first = keys[0];
    if (first === undefined) return err(posOfValue(src, path), `empty action in ${label}: write one of ${listed}`);
    return err(
      posOfKey(src, path, first),
      `unknown action "${first}" in ${label}${didYouMean(first, kinds) || `; expected one of: ${listed}`}`,
      "unknown-action",
    );
  }
  if (known.length > 1) {
    return err(
      posOfKey(src, path, known[1] ?? ""),
      `an action holds one kind: put "${known[0] ?? ""}" and "${known[1] ?? ""}" in separate entries of actions in ${label}`,
    );
  }
  const kind = known[0] ?? "";
  return schemaMessages(validateAction(kind, item), ctx, path);
}

export function checkSchema(src: SourceFile, data: unknown): SchemaResult {
  const ctx: MessageContext = { src, data };
  const badKeys = new Map<number, Set<string>>();
  if (data === null || data === undefined) {
    return {
      diagnostics: [
        { ...posOfValue(src, []), severity: "error", code: "schema", message: 'the file is empty: a rule file holds "version: 1" and "rules:"' },
      ],
      badKeys,
    };
  }
  if (!isRecord(data)) {
    return {
      diagnostics: [
        {
          ...posOfValue(src, []),
          severity: "error",
          code: "schema",
          message: `a rule file must be a mapping with "version: 1" and "rules:", not ${typeName(data)}`,
        },
      ],
      badKeys,
    };
  }
  const all = validateFile(data);
  // errors inside an action come from every branch of the anyOf over kinds: re-checked below by the kind named
  const errors = all.filter((e) => !ACTION_PATH.test(e.instancePath));
  const diagnostics = schemaMessages(errors, ctx);
  const rules = data.rules;
  if (Array.isArray(rules)) {
    rules.forEach((rule: unknown, i) => {
      if (!isRecord(rule) || !Array.isArray(rule.actions)) return;
      rule.actions.forEach((item: unknown, j) => diagnostics.push(...actionDiagnostics(ctx, i, j, item)));
    });
  }
  for (const e of all) {
    const m = /^\/rules\/(\d+)(?:\/([^/]+))?/.exec(e.instancePath);
    if (!m) continue;
    const idx = Number(m[1]);
    const set = badKeys.get(idx) ?? new Set<string>();
    set.add(m[2] ?? "");
    badKeys.set(idx, set);
  }
  return { diagnostics, badKeys };
}

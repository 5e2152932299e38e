/**
 * A rule's definition as a comparable string: the canonical JSON (keys sorted) of its YAML mapping. Comments,
 * quoting, key order and formatting do not count as a change; anchors and aliases are resolved first, so editing an
 * anchor counts for every rule that uses it.
 */
import { parseDocument } from "#yaml";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";

export interface RuleDefinition {
  name: string;
  /** the file it is defined in, as the caller names it */
  file: string;
  canonical: string;
}

/**
 * The rules of one file by name. A file that does not parse yields none: its rules cannot be compared, so the
 * other side's rules of the same names count as added (or removed), which errs towards planning more.
 */
export function ruleDefinitions(file: string, text: string): RuleDefinition[] {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) return [];
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 10_000 });
  } catch {
    return [];
  }
  if (!isRecord(data) || !Array.isArray(data.rules)) return [];
  const out: RuleDefinition[] = [];
  for (const r of data.rules as unknown[]) {
    if (isRecord(r) && typeof r.name === "string" && r.name !== "")
      out.push({ name: r.name, file, canonical: canonicalJson(r) });
  }
  return out;
}

/** Line and column (1-based) of an offset in a text. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `${line}:${offset - before.lastIndexOf("\n")}`;
}

/**
 * Why a file's rules cannot be read for comparison (it is not valid YAML), in one line with its line:col; undefined
 * when it parses. The caller says so: its rules silently counting as added would hide that they were never compared.
 */
export function definitionProblem(text: string): string | undefined {
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false });
  const first = doc.errors[0];
  if (first) return `${lineCol(text, first.pos[0])} ${first.message.split("\n")[0] ?? ""}`.trim();
  try {
    doc.toJS({ maxAliasCount: 10_000 });
  } catch (err) {
    return err instanceof Error ? err.message.split("\n")[0] : String(err);
  }
  return undefined;
}

export interface DefinitionDiff {
  added: string[];
  changed: string[];
  unchanged: string[];
  removed: Array<{ name: string; file: string }>;
}

/** Compares two rule sets by rule name (a rename is a removal and an addition; a move between files is no change). */
export function diffDefinitions(before: RuleDefinition[], now: RuleDefinition[]): DefinitionDiff {
  const old = new Map(before.map((d) => [d.name, d]));
  const current = new Map(now.map((d) => [d.name, d]));
  const out: DefinitionDiff = { added: [], changed: [], unchanged: [], removed: [] };
  for (const [name, d] of current) {
    const prev = old.get(name);
    if (!prev) out.added.push(name);
    else if (prev.canonical !== d.canonical) out.changed.push(name);
    else out.unchanged.push(name);
  }
  for (const [name, d] of old) if (!current.has(name)) out.removed.push({ name, file: d.file });
  return out;
}

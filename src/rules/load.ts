/** loadRules: files → YAML → schema → compiled rules → set checks. Never throws: every problem is a diagnostic. */
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { MAX_YAML_FILE_BYTES as MAX_RULE_FILE_BYTES } from "../fs/capped-read.js";
import { decodeUtf8 } from "./utf8.js";
import type { CompiledRule, Diagnostic, LoadResult } from "./types.js";
import { listRuleFiles, looksLikeRuleFile } from "./files.js";
import { parseRuleFile } from "./parse.js";
import { checkSchema } from "./schema-check.js";
import { compileRule } from "./compile.js";
import { duplicateNames, setChecks, type NamedAt } from "./checks.js";
import { posOfValue } from "./positions.js";
import { ruleSelection, unmatchedMessage } from "./rule-patterns.js";
import { clip } from "./messages.js";
import { errorMessage, isRecord } from "../model/guards.js";

export interface LoadOptions {
  /** keep only these rules (names or globs, src/rules/rule-patterns.ts); a pattern matching no rule is an error */
  only?: string[];
  /** rules one run may load (default MAX_RULES_PER_RUN; tests try the limit with a smaller one) */
  maxRules?: number;
}

export const DEFAULT_RULE_PATHS = ["rules/"];
/**
 * Rules one run loads at most (generous — the checks across rules are linear, 20,000 rules validate in a
 * few seconds, docs/performance.md). Past it, one located error instead of minutes of work and gigabytes.
 */
export const MAX_RULES_PER_RUN = 50_000;
const MAX_MESSAGE = 1000;
const MAX_RULE_LABEL = 80;


function internal(file: string, err: unknown): Diagnostic {
  const msg = errorMessage(err);
  return { file, line: 0, col: 0, severity: "error", code: "internal", message: `internal error while loading: ${msg}` };
}

interface FileOutcome {
  rules: CompiledRule[];
  names: NamedAt[];
  diagnostics: Diagnostic[];
}

function loadText(file: string, text: string): FileOutcome {
  const out: FileOutcome = { rules: [], names: [], diagnostics: [] };
  const parsed = parseRuleFile(file, text);
  out.diagnostics.push(...parsed.diagnostics);
  if (parsed.data === undefined && parsed.diagnostics.some((d) => d.severity === "error")) return out;
  const { src, data } = parsed;
  const schema = checkSchema(src, data);
  out.diagnostics.push(...schema.diagnostics);
  const raw = isRecord(data) && Array.isArray(data.rules) ? data.rules : [];
  raw.forEach((r: unknown, i) => {
    if (isRecord(r) && typeof r.name === "string" && r.name !== "") {
      out.names.push({ name: r.name, pos: posOfValue(src, ["rules", String(i), "name"]) });
    }
    const c = compileRule(src, i, r, schema.badKeys.get(i) ?? new Set());
    out.diagnostics.push(...c.diagnostics);
    if (c.rule) out.rules.push(c.rule);
  });
  return out;
}

function byPlace(files: readonly string[]): (a: Diagnostic, b: Diagnostic) => number {
  const order = new Map(files.map((f, i) => [f, i]));
  return (a, b) =>
    (order.get(a.file) ?? -1) - (order.get(b.file) ?? -1) || a.line - b.line || a.col - b.col;
}

export interface RuleSource {
  file: string;
  text: string;
}

/**
 * The whole pipeline over texts already read (the rule-test runner and the property test use it without disk I/O).
 * `problems` are diagnostics found before (missing paths, unreadable files); they count as errors of the set.
 */
export function compileSources(sources: readonly RuleSource[], opts: LoadOptions = {}, problems: Diagnostic[] = []): LoadResult {
  const diagnostics: Diagnostic[] = [...problems];
  const hash = createHash("sha256");
  const rules: CompiledRule[] = [];
  const names: NamedAt[] = [];
  const maxRules = opts.maxRules ?? MAX_RULES_PER_RUN;
  let tooMany: Diagnostic | undefined;
  for (const { file, text } of sources) {
    hash.update(text);
    if (tooMany) continue; // past the limit the rest is not compiled: the run stops at the error anyway
    try {
      const out = loadText(file, text);
      // appended one by one: spreading tens of thousands into push() overflows the stack
      for (const d of out.diagnostics) diagnostics.push(d);
      for (const r of out.rules) rules.push(r);
      for (const n of out.names) names.push(n);
    } catch (err) {
      diagnostics.push(internal(file, err));
    }
    const over = rules[maxRules];
    if (over) {
      tooMany = {
        ...over.pos, severity: "error", code: "too-many-rules", rule: over.name,
        message: `more than ${maxRules.toLocaleString("en-US")} rules in one run (this is rule ${(maxRules + 1).toLocaleString("en-US")}): split them across runs, one folder each`,
      };
      diagnostics.push(tooMany);
    }
  }
  if (!tooMany) {
    try {
      for (const d of duplicateNames(names)) diagnostics.push(d);
      for (const d of setChecks(rules)) diagnostics.push(d);
    } catch (err) {
      diagnostics.push(internal(sources[0]?.file ?? "", err));
    }
  }

  let selected = rules;
  if (opts.only && opts.only.length > 0) {
    const all = names.map((n) => n.name);
    const selection = ruleSelection(opts.only);
    const where = sources.map((s) => s.file).join(", ") || "the given paths";
    for (const u of selection.unmatched(all)) {
      diagnostics.push({ file: "", line: 0, col: 0, severity: "error", code: "unknown-rule", message: unmatchedMessage([u], where) });
    }
    selected = rules.filter((r) => selection.selects(r.name));
  }

  const files = sources.map((s) => s.file);
  diagnostics.sort(byPlace(files));
  // last line of defence against huge values quoted in messages (most messages already shorten what they quote)
  for (const [i, d] of diagnostics.entries()) {
    if (d.message.length > MAX_MESSAGE || (d.rule !== undefined && d.rule.length > MAX_RULE_LABEL)) {
      diagnostics[i] = { ...d, message: clip(d.message, MAX_MESSAGE), ...(d.rule !== undefined ? { rule: clip(d.rule, MAX_RULE_LABEL) } : {}) };
    }
  }
  const ok = !diagnostics.some((d) => d.severity === "error");
  return ok ? { ruleSet: { rules: selected, files, digest: hash.digest("hex") }, diagnostics } : { diagnostics };
}

/**
 * A rule file's bytes, or its size when it holds more than a rule file may (then nothing of it is read): the size is
 * taken from the open file before reading, and the read stops one byte past the cap whatever the size said.
 */
async function readCapped(file: string): Promise<Buffer | number> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    if (size > MAX_RULE_FILE_BYTES) return size;
    const buf = Buffer.alloc(MAX_RULE_FILE_BYTES + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_RULE_FILE_BYTES) return Math.max(size, total);
    }
    return buf.subarray(0, total);
  } finally {
    await fh.close();
  }
}

/** Loads rule files and folders (default `rules/`); never throws, every problem is a diagnostic. */
export async function loadRules(paths: string[], opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: Diagnostic[] = [];
  const listing = await listRuleFiles(paths.length > 0 ? paths : DEFAULT_RULE_PATHS).catch((err: unknown) => {
    problems.push(internal(paths.join(" "), err));
    return { files: [], fromFolders: new Set<string>(), problems: [] };
  });
  for (const p of listing.problems) {
    problems.push({ file: p.path, line: 0, col: 0, severity: "error", code: "file", message: p.message });
  }
  const sources: RuleSource[] = [];
  for (const file of listing.files) {
    try {
      const bytes = await readCapped(file);
      if (typeof bytes === "number") {
        // judged by its size before a byte is read: a 400 MB file was read whole (840 MB) and then skipped unsaid
        const size = `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
        if (listing.fromFolders.has(file)) {
          problems.push({ file, line: 1, col: 1, severity: "warning", code: "too-large", message: `skipped, not read: the file holds ${size}, and a rule file may hold at most 1 MiB` });
        } else {
          problems.push({ file, line: 1, col: 1, severity: "error", code: "too-large", message: `the file holds ${size}: a rule file may hold at most 1 MiB (split it into several files)` });
        }
        continue;
      }
      const decoded = decodeUtf8(bytes);
      if (!decoded.ok) {
        // a file of a folder that is no rule file is skipped as before, whatever its encoding
        if (listing.fromFolders.has(file) && !looksLikeRuleFile(bytes.toString("latin1"))) continue;
        problems.push({ file, line: decoded.line, col: decoded.col, severity: "error", code: "file", message: decoded.message });
        continue;
      }
      const text = decoded.text;
      if (listing.fromFolders.has(file) && !looksLikeRuleFile(text)) continue;
      sources.push({ file, text });
    } catch (err) {
      problems.push({
        file, line: 0, col: 0, severity: "error", code: "file",
        message: `cannot read ${file}: ${errorMessage(err)}`,
      });
    }
  }
  return compileSources(sources, opts, problems);
}

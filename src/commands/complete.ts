/**
 * Names the completion scripts offer, read cheaply at completion time from the words typed so far: profile names
 * (the `profiles:` keys of the file `--config` names on the line, else the config variable's, else the nearest
 * flowrules.config.yaml up to the repository root, as a run finds it: src/fs/config-file.ts) and rule names (the `name:` of each rule in the paths typed after the
 * verb, else rules/, read as YAML without compiling). A missing or unreadable file is no names.
 *
 * The names come from files anyone may have written (a cloned repository's config): only names of the shape the
 * loaders accept (letters, digits, '.', '_', '-') are printed, so no shell that inserts one can run a name as code
 * (docs/safety.md). Each file is read once, at most 1 MiB of a regular file (src/fs/capped-read.ts).
 */
import { parse } from "#yaml";
import { readCappedText } from "../fs/capped-read.js";
import { findConfigFile } from "../fs/config-file.js";
import { isRecord } from "../model/guards.js";
// files.js alone: the rules index would load the compiler, and this runs on every Tab
import { listRuleFiles } from "../rules/files.js";
import { ENV } from "../model/env-names.js";

/** the default rule paths of every verb (DEFAULT_RULE_PATHS in src/rules/load.ts) */
const RULE_PATHS = ["rules/"];

export type CompletionList = "profiles" | "rules";

export interface TypedLine {
  verb?: string;
  /** positional words after the verb */
  paths: string[];
  /** the value of --config, when typed */
  config?: string;
}

/** The words typed before the cursor (program name excluded): the verb, its positional words and --config. */
export function typedLine(words: readonly string[], valueFlags: ReadonlySet<string>): TypedLine {
  const line: TypedLine = { paths: [] };
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "--config" || w.startsWith("--config=")) {
      const value = w === "--config" ? words[++i] : w.slice("--config=".length);
      if (value) line.config = value;
    } else if (w.startsWith("-")) {
      if (valueFlags.has(w)) i++;
    } else if (line.verb === undefined) line.verb = w;
    else line.paths.push(w);
  }
  return line;
}

/**
 * The shape of a profile or rule name (the config schema and the rules schema): nothing a shell expands, quotes or
 * splits. A name of another shape would be refused by the loaders anyway, so nothing of use is left out.
 */
const OFFERED_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;

export function offered(names: Iterable<string>): string[] {
  return [...new Set([...names].filter((n) => OFFERED_NAME.test(n)))];
}

function yamlOf(file: string): unknown {
  try {
    const read = readCappedText(file);
    // aliases are not expanded past a few: a tiny file must not become gigabytes on a Tab
    return read.ok
      ? (parse(read.text, { maxAliasCount: 100, uniqueKeys: false, logLevel: "silent" }) as unknown)
      : undefined;
  } catch {
    return undefined;
  }
}

export function profileNames(env: Record<string, string | undefined>, config?: string): Promise<string[]> {
  const file = config || env[ENV.config] || findConfigFile(process.cwd());
  const doc = file ? yamlOf(file) : undefined;
  return Promise.resolve(isRecord(doc) && isRecord(doc.profiles) ? offered(Object.keys(doc.profiles)) : []);
}

export async function ruleNames(paths: string[] = RULE_PATHS): Promise<string[]> {
  const listing = await listRuleFiles(paths.length > 0 ? paths : RULE_PATHS);
  const names: string[] = [];
  for (const file of listing.files) {
    const doc = yamlOf(file);
    const rules = isRecord(doc) && Array.isArray(doc.rules) ? doc.rules : [];
    for (const r of rules) if (isRecord(r) && typeof r.name === "string") names.push(r.name);
  }
  return offered(names);
}

export function completionNames(
  list: CompletionList,
  env: Record<string, string | undefined>,
  line: TypedLine = { paths: [] },
): Promise<string[]> {
  return list === "profiles" ? profileNames(env, line.config) : ruleNames(line.paths);
}

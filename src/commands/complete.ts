/**
 * Names the completion scripts offer, read cheaply at completion time: profile names (the `profiles:` keys of
 * flowrules.config.yaml in the current folder, or of $FLOWRULES_CONFIG; docs/operating.md) and rule names (the
 * `name:` of each rule in rules/, read as YAML without compiling). A missing or unreadable file is no names.
 */
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { isRecord } from "../model/guards.js";
// files.js alone: the rules index would load the compiler, and this runs on every Tab
import { listRuleFiles } from "../rules/files.js";

export const CONFIG_FILE = "flowrules.config.yaml";

async function yamlOf(file: string): Promise<unknown> {
  try {
    return parse(await readFile(file, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

export async function profileNames(env: Record<string, string | undefined>): Promise<string[]> {
  const doc = await yamlOf(env.FLOWRULES_CONFIG || CONFIG_FILE);
  return isRecord(doc) && isRecord(doc.profiles) ? Object.keys(doc.profiles) : [];
}

/** the default rule paths of every verb (DEFAULT_RULE_PATHS in src/rules/load.ts) */
const RULE_PATHS = ["rules/"];

export async function ruleNames(paths: string[] = RULE_PATHS): Promise<string[]> {
  const listing = await listRuleFiles(paths);
  const names: string[] = [];
  for (const file of listing.files) {
    const doc = await yamlOf(file);
    const rules = isRecord(doc) && Array.isArray(doc.rules) ? doc.rules : [];
    for (const r of rules) if (isRecord(r) && typeof r.name === "string" && /^[A-Za-z0-9._-]+$/.test(r.name)) names.push(r.name);
  }
  return [...new Set(names)];
}

export function completionNames(list: "profiles" | "rules", env: Record<string, string | undefined>): Promise<string[]> {
  return list === "profiles" ? profileNames(env) : ruleNames();
}

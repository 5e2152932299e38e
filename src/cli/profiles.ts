/**
 * Profiles (docs/operating.md, Profiles): `flowrules.config.yaml` in the current directory or the nearest parent up
 * to the repository root (src/fs/config-file.ts), or `--config FILE` /
 * its variable, names one profile per service or tenant; `--profile NAME` / its variable / `default_profile`
 * picks one. A profile is one more source of settings, below flags and environment (src/cli/settings.ts).
 * Every problem with the file is one line naming file:line:col; the API key is never read from it.
 */
import { dirname } from "node:path";
import { LineCounter, isMap, isNode, isPair, isScalar, isSeq, parseDocument, visit } from "#yaml";
import { MAX_YAML_FILE_BYTES, readCappedText } from "../fs/capped-read.js";
import { CONFIG_KEYS, ConfigFileSchema, PROFILE_KEYS, SECRET_KEYS, type Profile } from "../model/config.js";
import { UserError } from "../model/errors.js";
import { errorMessage } from "../model/guards.js";
import { didYouMean } from "../text/suggest.js";
import { CONFIG_FILE } from "../model/defaults.js";
import { configFileChoice, noConfigFile, profileAsked, type ConfigFileChoice } from "./config-choice.js";
import { posOfKey, posOfValue, posAt, type SourceFile } from "../rules/positions.js";
import { CONFIG_ENV } from "./flags.js";
import { ENV } from "../model/env-names.js";

/** The profile a run uses, with the file it came from (relative paths in it resolve against that file's folder). */
export interface LoadedProfile {
  name: string;
  /** the config file as the user would name it (relative to cwd when below it) */
  file: string;
  dir: string;
  values: Profile;
  /** where each key's value is written, as file:line:col, so a value refused later is still shown in place */
  at: Partial<Record<keyof Profile, string>>;
  /** what chose it, in words: "--profile", its variable, "default_profile" */
  chosenBy: string;
}

const atPos = (p: { file: string; line: number; col: number }): string => `${p.file}:${p.line}:${p.col}`;

/** A key as a message shows it: a plain word as is, anything else quoted (no control character reaches the terminal). */
const keyShown = (k: string): string => (/^[\w.-]+$/.test(k) ? k : JSON.stringify(k));

/**
 * The first problem with the file's keys, in the order they are written: a key that is not a word, a key written twice
 * in one mapping, or a key that would hold a secret (refused before anything else is said about it). One pass with a
 * set per mapping: yaml's own duplicate check compares every key with every other, minutes on a 1 MiB file.
 */
function keyProblem(src: SourceFile): string | undefined {
  let first: { offset: number; message: string } | undefined;
  const found = (offset: number, message: string): void => {
    if (first === undefined || offset < first.offset) first = { offset, message };
  };
  const stack: Array<{ node: unknown; path: string[] }> = [{ node: src.doc.contents, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() ?? { node: undefined, path: [] };
    if (isSeq(node)) for (const item of node.items) stack.push({ node: item, path });
    if (!isMap(node)) continue;
    const seen = new Set<unknown>();
    for (const item of node.items) {
      if (!isPair(item)) continue;
      if (!isScalar(item.key)) {
        found(
          rangeStart(item.key) ?? rangeStart(node) ?? 0,
          `${path.map(keyShown).join(".") || "the file"}: a key is a plain word, not a list, a mapping or an alias`,
        );
        continue;
      }
      const key = String(item.key.value);
      const offset = item.key.range?.[0] ?? 0;
      const name = [...path, key].map(keyShown).join(".");
      if (seen.has(item.key.value)) found(offset, `${name}: written twice in one mapping (each key once)`);
      seen.add(item.key.value);
      // the keys right under `profiles` are names of the user's choosing ("secrets-vault" is a fine tenant name)
      const isName = path.length === 1 && path[0] === "profiles";
      if (!isName && looksLikeSecret(key)) {
        found(
          offset,
          `${name}: an API key is never written in ${src.file}; keep it in an environment variable and name that variable with api_key_env (default ${ENV.apiKey})`,
        );
      }
      stack.push({ node: item.value, path: [...path, key] });
    }
  }
  return first && `${atPos(posAt(src, first.offset))}: ${first.message}`;
}

const rangeStart = (n: unknown): number | undefined => (isNode(n) ? n.range?.[0] : undefined);

/** api_key, apiKey, token, client_secret, password …: a key named for a secret (api_key_env names a variable: allowed). */
function looksLikeSecret(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_ ]/g, "");
  return (
    k !== "apikeyenv" &&
    (SECRET_KEYS.some((s) => k === s.replace(/[-_]/g, "")) || /(apikey|token|secret|password)/.test(k))
  );
}

/** Where the first alias (`*name`) is written: where a file whose aliases expand too far is shown. */
function firstAlias(src: SourceFile): number {
  let at = 0;
  visit(src.doc, {
    Alias(_, node) {
      at = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return at;
}

/** Reads and checks the config file; throws a one-line UserError naming file:line:col. */
function readConfigFile(
  abs: string,
  shown: string,
): { config: ReturnType<typeof ConfigFileSchema.parse>; src: SourceFile } {
  // at most 1 MiB of a regular file: `--config /dev/zero`, a FIFO or a folder is one line, not a read without end
  const read = readCappedText(abs, MAX_YAML_FILE_BYTES);
  if (!read.ok) throw new UserError(`${shown}: cannot read the config file (${read.problem})`);
  const text = read.text;
  const lines = new LineCounter();
  // duplicate keys are found by keyProblem (linear), not by yaml's uniqueKeys (quadratic)
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const src: SourceFile = { file: shown, text, doc, lines };
  const syntax = doc.errors[0];
  if (syntax)
    throw new UserError(`${atPos(posAt(src, syntax.pos[0]))}: ${syntax.message.split("\n")[0] ?? "not YAML"}`);
  const keys = keyProblem(src);
  if (keys) throw new UserError(keys);
  let data: unknown;
  try {
    // aliases are legal YAML, but a tiny file must not expand into gigabytes (billion laughs), as in rule files
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    const message = errorMessage(err);
    throw new UserError(
      /Excessive alias count/.test(message)
        ? `${atPos(posAt(src, firstAlias(src)))}: YAML aliases (*name) expand too far: this looks like a "billion laughs" file; use fewer aliases`
        : `${atPos(posAt(src, 0))}: YAML: ${message.split("\n")[0] ?? ""}`,
    );
  }
  const parsed = ConfigFileSchema.safeParse(data ?? {});
  if (parsed.success) return { config: parsed.data, src };
  // a misspelt key first: "profils" says more as a typo than as "profiles is missing"
  const issue = parsed.error.issues.find((i) => i.code === "unrecognized_keys") ?? parsed.error.issues[0];
  if (!issue) throw new UserError(`${shown}: not a valid config file`);
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : "";
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const where = atPos(posOfKey(src, path, key));
    const known = path.length === 0 ? CONFIG_KEYS : PROFILE_KEYS;
    throw new UserError(
      `${where}: ${[...path, key].map(String).map(keyShown).join(".")}: unknown key${didYouMean(key, known)} (known: ${known.join(", ")})${more}`,
    );
  }
  if (issue.code === "invalid_key") {
    const key = String(path[path.length - 1] ?? "");
    const where = atPos(posOfKey(src, path.slice(0, -1), key));
    throw new UserError(
      `${where}: profile name ${keyShown(key)}: a profile name is letters, digits, '.', '_' or '-', starting with a letter or digit${more}`,
    );
  }
  const name = path.length > 0 ? path.map(String).map(keyShown).join(".") : "the file";
  throw new UserError(`${atPos(posOfValue(src, path))}: ${name}: ${issue.message}${more}`);
}

/**
 * The profile in effect, or undefined when none is named and the file (if any) has no default_profile. Naming a
 * profile without a file, or one the file does not define, is an error.
 */
export function loadProfile(
  opts: { config?: string | undefined; profile?: string | undefined },
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
  file: ConfigFileChoice = configFileChoice(opts, env, cwd),
): LoadedProfile | undefined {
  const { asked, from } = profileAsked(opts, env);
  if (noConfigFile(file)) {
    if (asked === undefined) return undefined;
    throw new UserError(
      `${from} ${asked}: there is no ${CONFIG_FILE} in ${cwd} or a parent folder up to the repository root (or name one with --config FILE / ${CONFIG_ENV})`,
    );
  }
  const { abs, shown } = file;
  const { config, src } = readConfigFile(abs, shown);
  const name = asked ?? config.default_profile;
  if (name === undefined) return undefined;
  const values = config.profiles[name];
  if (!values) {
    const defined = Object.keys(config.profiles);
    const source = asked === undefined ? `default_profile ${name}` : `${from} ${name}`;
    throw new UserError(
      `${source}: no such profile in ${shown}${didYouMean(name, defined)}; defined: ${defined.length > 0 ? defined.join(", ") : "none"}`,
    );
  }
  const at: LoadedProfile["at"] = {};
  for (const key of Object.keys(values) as Array<keyof Profile>)
    at[key] = atPos(posOfValue(src, ["profiles", name, key]));
  return { name, file: shown, dir: dirname(abs), values, at, chosenBy: asked === undefined ? "default_profile" : from };
}

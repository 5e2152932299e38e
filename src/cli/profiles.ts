/**
 * Profiles (docs/operating.md, Profiles): `flowrules.config.yaml` in the current directory, or `--config FILE` /
 * FLOWRULES_CONFIG, names one profile per service or tenant; `--profile NAME` / FLOWRULES_PROFILE / `default_profile`
 * picks one. A profile is one more source of settings, below flags and environment (src/cli/settings.ts).
 * Every problem with the file is one line naming file:line:col; the API key is never read from it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { LineCounter, isMap, isPair, isScalar, parseDocument } from "yaml";
import { ConfigFileSchema, SECRET_KEYS, type Profile } from "../model/config.js";
import { UserError } from "../model/errors.js";
import { CONFIG_FILE } from "../model/settings.js";
import { posOfKey, posOfValue, posAt, type SourceFile } from "../rules/positions.js";
import { CONFIG_ENV, PROFILE_ENV } from "./flags.js";

export { CONFIG_ENV, PROFILE_ENV };

/** The profile a run uses, with the file it came from (relative paths in it resolve against that file's folder). */
export interface LoadedProfile {
  name: string;
  /** the config file as the user would name it (relative to cwd when below it) */
  file: string;
  dir: string;
  values: Profile;
  /** where each key's value is written, as file:line:col, so a value refused later is still shown in place */
  at: Partial<Record<keyof Profile, string>>;
}

const atPos = (p: { file: string; line: number; col: number }): string => `${p.file}:${p.line}:${p.col}`;

function shownPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith("..") ? rel : abs;
}

/** A key that would hold a secret, anywhere in the file: refused before anything else is said about it. */
function secretKeyProblem(src: SourceFile): string | undefined {
  const stack: Array<{ node: unknown; path: string[] }> = [{ node: src.doc.contents, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() ?? { node: undefined, path: [] };
    if (!isMap(node)) continue;
    for (const item of node.items) {
      if (!isPair(item) || !isScalar(item.key)) continue;
      const key = String(item.key.value);
      // the keys right under `profiles` are names of the user's choosing ("secrets-vault" is a fine tenant name)
      const isName = path.length === 1 && path[0] === "profiles";
      if (!isName && looksLikeSecret(key)) {
        const pos = posAt(src, item.key.range?.[0] ?? 0);
        return `${atPos(pos)}: ${[...path, key].join(".")}: an API key is never written in ${src.file}; keep it in an environment variable and name that variable with api_key_env (default FLOWRULES_API_KEY)`;
      }
      stack.push({ node: item.value, path: [...path, key] });
    }
  }
  return undefined;
}

/** api_key, apiKey, token, client_secret, password …: a key named for a secret (api_key_env names a variable: allowed). */
function looksLikeSecret(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_ ]/g, "");
  return k !== "apikeyenv" && (SECRET_KEYS.some((s) => k === s.replace(/[-_]/g, "")) || /(apikey|token|secret|password)/.test(k));
}

/** Reads and checks the config file; throws a one-line UserError naming file:line:col. */
function readConfigFile(abs: string, shown: string): { config: ReturnType<typeof ConfigFileSchema.parse>; src: SourceFile } {
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${shown}: cannot read the config file (${code === "ENOENT" ? "no such file" : (code ?? "unreadable")})`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const src: SourceFile = { file: shown, text, doc, lines };
  const syntax = doc.errors[0];
  if (syntax) throw new UserError(`${atPos(posAt(src, syntax.pos[0]))}: ${syntax.message.split("\n")[0] ?? "not YAML"}`);
  const secret = secretKeyProblem(src);
  if (secret) throw new UserError(secret);
  const parsed = ConfigFileSchema.safeParse(doc.toJS() ?? {});
  if (parsed.success) return { config: parsed.data, src };
  const issue = parsed.error.issues[0];
  if (!issue) throw new UserError(`${shown}: not a valid config file`);
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : "";
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const where = atPos(posOfKey(src, path, key));
    const allowed = path.length === 0 ? "default_profile, profiles" : "base_url, rate_limit, api_key_env, workflows, notify, opt_out_tag, state";
    throw new UserError(`${where}: ${[...path, key].join(".")}: unknown key (known: ${allowed})${more}`);
  }
  const name = path.length > 0 ? path.join(".") : "the file";
  throw new UserError(`${atPos(posOfValue(src, path))}: ${name}: ${issue.message}${more}`);
}

/**
 * The profile in effect, or undefined when none is named and the file (if any) has no default_profile. Naming a
 * profile without a file, or one the file does not define, is an error.
 */
export function loadProfile(opts: { config?: string | undefined; profile?: string | undefined }, env: Record<string, string | undefined>, cwd = process.cwd()): LoadedProfile | undefined {
  const explicitFile = opts.config ?? (env[CONFIG_ENV] || undefined);
  const abs = resolve(cwd, explicitFile ?? CONFIG_FILE);
  const asked = opts.profile ?? (env[PROFILE_ENV] || undefined);
  const from = opts.profile !== undefined ? "--profile" : PROFILE_ENV;
  if (explicitFile === undefined && !existsSync(abs)) {
    if (asked === undefined) return undefined;
    throw new UserError(`${from} ${asked}: there is no ${CONFIG_FILE} in ${cwd} (or name one with --config FILE / ${CONFIG_ENV})`);
  }
  const shown = shownPath(abs, cwd);
  const { config, src } = readConfigFile(abs, shown);
  const name = asked ?? config.default_profile;
  if (name === undefined) return undefined;
  const values = config.profiles[name];
  if (!values) {
    const defined = Object.keys(config.profiles);
    const source = asked === undefined ? `default_profile ${name}` : `${from} ${name}`;
    throw new UserError(`${source}: no such profile in ${shown}; defined: ${defined.length > 0 ? defined.join(", ") : "none"}`);
  }
  const at: LoadedProfile["at"] = {};
  for (const key of Object.keys(values) as Array<keyof Profile>) at[key] = atPos(posOfValue(src, ["profiles", name, key]));
  return { name, file: shown, dir: dirname(abs), values, at };
}

/**
 * Markdown reference of the command line, read from the commander program itself (the same objects `--help`
 * prints), so docs/cli.md cannot drift from src/cli: every verb, argument and option with its choices and default,
 * and the environment variables the descriptions name.
 */
import type { Argument, Command, Option } from "commander";
import { cell } from "./markdown.js";
import { EXAMPLES } from "#flowrules/cli/examples.js";

/** Environment variables flowrules reads that no option description names, with what they do. */
export const ENVIRONMENT: Readonly<Record<string, string>> = {
  FLOWRULES_API_KEY:
    "The API key, sent as `Authorization: Api-Key <key>` (a profile's `api_key_env` names another variable to read it from). Read only from the environment, never from a flag or a file, so it stays out of shell history and CI logs; it is scrubbed from every output, log line and error.",
  FLOWRULES_BASE_URL: "The service base URL, e.g. `https://host/api` (the `--base-url` flag wins).",
  FLOWRULES_RATE_LIMIT: "Client-side limit in requests a minute, 0 = off; default 100 (the `--rate-limit` flag wins).",
  FLOWRULES_OPT_OUT_TAG:
    "An instance carrying this tag is changed by no rule and counted as excluded; default `no-automation`, empty turns the opt-out off (the `--opt-out-tag` flag wins).",
  FLOWRULES_NOTIFY_URL:
    "Webhooks told at the end of `plan` and `apply`, comma-separated (the `--notify` flags win): one JSON POST each, https:// or http:// to loopback unless `--insecure-http`.",
  FLOWRULES_CONFIG: "The profiles file (the `--config` flag wins); default `flowrules.config.yaml` in the current directory, when present.",
  FLOWRULES_PROFILE:
    "The profile of the profiles file to use (the `--profile` flag wins; otherwise the file's `default_profile`). A profile's values come after flags and environment variables, before defaults.",
  FLOWRULES_STATE:
    "The state dir of `plan` and `apply` with rule paths (the `--state` flag wins; a profile's `state` after it): what each run learned, so the next asks the service only for what changed; the plan is the same as without it (docs/operating.md, \"State between runs\"); `watch` keeps its bookmarks, lock and journals under `watch/` in it.",
  FLOWRULES_DEBUG: "`1` adds the stack trace to an unexpected error (otherwise one line).",
  NO_COLOR: "Any non-empty value turns colours off (colours are only used on a terminal anyway); `--color` turns them on regardless.",
};

const ENV_NAME = /\b(FLOWRULES_[A-Z_]+|NO_COLOR)\b/g;
const show = (v: unknown): string => `\`${JSON.stringify(v)}\``;

function argumentRow(a: Argument): string {
  const name = a.variadic ? `${a.name()}...` : a.name();
  const notes: string[] = [a.required ? "required" : "optional"];
  if (a.argChoices) notes.push(`one of ${a.argChoices.map((c) => `\`${c}\``).join(", ")}`);
  if (a.defaultValue !== undefined) notes.push(`default ${show(a.defaultValue)}`);
  return `| \`${name}\` | ${cell(a.description)} | ${notes.join("; ")} |`;
}

function optionRow(o: Option): string {
  const notes: string[] = [];
  if (o.mandatory) notes.push("required");
  if (o.argChoices) notes.push(`one of ${o.argChoices.map((c) => `\`${c}\``).join(", ")}`);
  if (o.defaultValue !== undefined && !(Array.isArray(o.defaultValue) && o.defaultValue.length === 0)) notes.push(`default ${show(o.defaultValue)}`);
  if (Array.isArray(o.defaultValue) && o.defaultValue.length === 0) notes.push("repeatable");
  if (o.envVar) notes.push(`env \`${o.envVar}\``);
  return `| \`${o.flags}\` | ${cell(o.description)} | ${notes.join("; ")} |`;
}

function usage(cmd: Command, program: Command): string {
  const args = cmd.registeredArguments.map((a) => {
    const n = a.variadic ? `${a.name()}...` : a.name();
    return a.required ? `<${n}>` : `[${n}]`;
  });
  return [program.name(), cmd.name(), "[options]", ...args].join(" ");
}

function envNames(text: string): string[] {
  return [...text.matchAll(ENV_NAME)].map((m) => m[1]!);
}

/** The CLI reference as Markdown. */
export function cliReference(program: Command): string {
  const out: string[] = [];
  const visible = (c: Command): Option[] => c.options.filter((o) => !o.hidden);
  // verbs named "__…" are internal (the completion scripts' `__complete`), not for people
  const commands = program.commands.filter((c) => !c.name().startsWith("__"));
  out.push(`${program.description()}`, "");
  out.push("Usage: `" + `${program.name()} [global options] <command> [options] [arguments]` + "`", "");
  out.push("Every command also takes `-h, --help`.", "");
  out.push("## Commands", "");
  out.push("| Command | What it does |", "| --- | --- |");
  for (const c of commands) out.push(`| [\`${c.name()}\`](#${program.name()}-${c.name()}) | ${cell(c.description())} |`);
  out.push("", "## Global options", "", "Accepted before or after the command.", "");
  out.push("| Option | Description | Notes |", "| --- | --- | --- |", ...visible(program).map(optionRow), "");
  const mentioned = new Map<string, Set<string>>();
  const note = (name: string, where: string): void => {
    if (!mentioned.has(name)) mentioned.set(name, new Set());
    mentioned.get(name)!.add(where);
  };
  for (const o of visible(program)) for (const e of envNames(o.description)) note(e, `\`${o.long ?? o.flags}\``);
  for (const c of commands) {
    out.push(`## ${program.name()} ${c.name()}`, "", cell(c.description()), "", "```", usage(c, program), "```", "");
    if (c.registeredArguments.length > 0) {
      out.push("| Argument | Description | Notes |", "| --- | --- | --- |", ...c.registeredArguments.map(argumentRow), "");
    }
    const opts = visible(c);
    if (opts.length > 0) out.push("| Option | Description | Notes |", "| --- | --- | --- |", ...opts.map(optionRow), "");
    const examples = EXAMPLES[c.name()] ?? [];
    if (examples.length > 0) out.push("Examples:", "", "```", ...examples.map(([line, what]) => `${line}    # ${what}`), "```", "");
    for (const o of opts) for (const e of envNames(o.description)) note(e, `\`${o.long ?? o.flags}\``);
  }
  out.push("## Environment", "");
  out.push("| Variable | What it does | Named by |", "| --- | --- | --- |");
  const names = [...new Set([...Object.keys(ENVIRONMENT), ...mentioned.keys()])].sort();
  for (const name of names) {
    const what = ENVIRONMENT[name];
    if (what === undefined) throw new Error(`${name} is named by an option but has no entry in ENVIRONMENT (scripts/docs/cli-reference.ts)`);
    const by = [...(mentioned.get(name) ?? [])];
    out.push(`| \`${name}\` | ${cell(what)} | ${by.length > 0 ? by.join(", ") : "—"} |`);
  }
  out.push("");
  return out.join("\n");
}

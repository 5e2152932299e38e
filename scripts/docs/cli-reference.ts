/**
 * Markdown reference of the command line, read from the commander program itself (the same objects `--help`
 * prints), so docs/cli.md cannot drift from src/cli: every verb, argument and option with its choices and default,
 * and the environment variables, from the settings table (src/model/settings-table.ts) like the options.
 */
import type { Argument, Command, Option } from "commander";
import { cell } from "./markdown.js";
import { EXAMPLES } from "#flowrules/cli/examples.js";
import { ENV } from "#flowrules/model/env-names.js";
import { ALL_SETTINGS, OTHER_VARIABLES } from "#flowrules/model/settings-table.js";

/** A row of the environment table: what the variable does, and the flag, profile key and default of its setting. */
export interface EnvironmentRow {
  name: string;
  what: string;
  flag?: string;
  profile?: string;
  default?: number | string | boolean;
}

/**
 * Every variable flowrules reads, from the settings table (src/model/settings-table.ts): each setting with a variable,
 * then the variables of no setting. A variable in src/model/env-names.ts with neither is an error, so a new one cannot
 * go undocumented.
 */
export function environmentRows(): EnvironmentRow[] {
  const rows: EnvironmentRow[] = [];
  for (const s of ALL_SETTINGS) {
    if (s.env === undefined) continue;
    const row: EnvironmentRow = { name: s.env, what: s.envDocs ?? s.help };
    if (s.flags !== undefined) row.flag = s.flags.split(" ")[0]!;
    // a profile's api_key_env names another variable: it is no value of this one
    if (s.profile !== undefined && s.read?.kind !== "variable") row.profile = s.profile;
    if (s.default !== undefined) row.default = s.default;
    rows.push(row);
  }
  for (const v of OTHER_VARIABLES) if (v.docs !== null) rows.push({ name: v.name, what: v.docs });
  const known = new Set([...rows.map((r) => r.name), ...OTHER_VARIABLES.map((v) => v.name)]);
  const missing = Object.values(ENV).filter((n) => !known.has(n));
  if (missing.length > 0) {
    throw new Error(`${missing.join(", ")}: no setting or OTHER_VARIABLES entry in src/model/settings-table.ts says what it does`);
  }
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

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
  out.push(
    "A flag wins over its variable, the variable over the profile's key, the key over the default ([Profiles](operating.md#profiles-several-services-or-tenants)).",
    "",
  );
  out.push("| Variable | What it does | Flag | Profile key | Default |", "| --- | --- | --- | --- | --- |");
  const rows = environmentRows();
  for (const name of mentioned.keys()) {
    if (!rows.some((r) => r.name === name)) throw new Error(`${name} is named by an option but the settings table does not say what it does`);
  }
  const code = (v: unknown): string => (v === undefined ? "—" : `\`${String(v)}\``);
  for (const r of rows) {
    out.push(`| \`${r.name}\` | ${cell(r.what)} | ${code(r.flag)} | ${code(r.profile)} | ${r.default === undefined ? "—" : show(r.default)} |`);
  }
  out.push("");
  return out.join("\n");
}

/**
 * The fish completion script: one `complete` line per verb and flag; profile and rule names from `flowrules __complete`,
 * one candidate a line of the command substitution (fish escapes a candidate when inserting it and never evaluates it;
 * docs/safety.md).
 */
import { shortText, type CompletionSpec, type FlagSpec } from "./types.js";

const quote = (s: string): string => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function flagLine(program: string, condition: string, f: FlagSpec, completeVerb: string): string {
  const parts = [`complete -c ${program}`, `-n ${quote(condition)}`];
  if (f.long) parts.push(`-l ${f.long.replace(/^--/, "")}`);
  if (f.short) parts.push(`-s ${f.short.replace(/^-/, "")}`);
  const v = f.value;
  if (v?.kind === "choices") parts.push(`-x -a ${quote(v.choices.join(" "))}`);
  else if (v?.kind === "dynamic")
    parts.push(`-x -a ${quote(`(${program} ${completeVerb} ${v.list} -- (commandline -opc)[2..-1] 2>/dev/null)`)}`);
  else if (v?.kind === "file") parts.push("-r -F");
  else if (v?.kind === "dir") parts.push(`-x -a ${quote("(__fish_complete_directories)")}`);
  else if (v) parts.push("-x");
  parts.push(`-d ${quote(shortText(f.description))}`);
  return parts.join(" ");
}

export function fishCompletion(spec: CompletionSpec): string {
  const p = spec.program;
  const names = spec.verbs.map((v) => v.name).join(" ");
  const lines = [
    `# fish completion for ${p} (generated from its commands: ${p} completion fish)`,
    `# Load it in the current shell:   ${p} completion fish | source`,
    `# or for every shell:              ${p} completion fish > ~/.config/fish/completions/${p}.fish`,
    `complete -c ${p} -e`,
    `complete -c ${p} -f`,
  ];
  for (const v of spec.verbs)
    lines.push(
      `complete -c ${p} -n ${quote(`not __fish_seen_subcommand_from ${names}`)} -a ${v.name} -d ${quote(shortText(v.description))}`,
    );
  for (const f of spec.globalFlags) lines.push(flagLine(p, "true", f, spec.completeVerb));
  for (const v of spec.verbs) {
    const cond = `__fish_seen_subcommand_from ${v.name}`;
    for (const f of v.flags) lines.push(flagLine(p, cond, f, spec.completeVerb));
    if (v.argChoices) lines.push(`complete -c ${p} -n ${quote(cond)} -a ${quote(v.argChoices.join(" "))}`);
    else if (v.paths) lines.push(`complete -c ${p} -n ${quote(cond)} -F`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `flowrules completion bash|zsh|fish` prints a completion script generated from the commander program itself (its
 * verbs, flags and choices), so a flag added to any verb is completed without editing this file. Profile and rule
 * names change with the files, so the scripts ask the hidden `flowrules __complete profiles|rules` at completion time
 * (./tab.ts answers it, from the table of value flags the build writes when there is one).
 */
import { Argument, type Command, type Option } from "commander";
import type { CompletionSpec, FlagSpec, ValueKind } from "../render/completion/index.js";
import { COMPLETION_SHELL_NAMES, type CompletionShell } from "../render/format-names.js";

import { COMPLETE_VERB, LISTS, printNames, type CompletionListName } from "./tab.js";

export { COMPLETE_VERB };

function valueKind(o: Option): ValueKind | undefined {
  if (!o.required && !o.optional) return undefined;
  if (o.argChoices) return { kind: "choices", choices: [...o.argChoices] };
  if (o.long === "--profile") return { kind: "dynamic", list: "profiles" };
  if (o.long === "--rule") return { kind: "dynamic", list: "rules" };
  // the value's name says what it is: <file>, <plan.json>, <dir>
  const name = /<([^>]+)>|\[([^\]]+)\]/.exec(o.flags)?.slice(1).find(Boolean) ?? "";
  if (/dir/i.test(name)) return { kind: "dir" };
  if (/file|\.json|\.ya?ml/i.test(name)) return { kind: "file" };
  return { kind: "none" };
}

function flagOf(o: Option): FlagSpec {
  const value = valueKind(o);
  return {
    ...(o.long ? { long: o.long } : {}),
    ...(o.short ? { short: o.short } : {}),
    description: o.description,
    ...(value ? { value } : {}),
  };
}

const HELP: FlagSpec = { long: "--help", short: "-h", description: "display help" };

/** The program as completion data: every visible verb and flag (names starting with "__" are internal). */
export function completionSpec(program: Command): CompletionSpec {
  const visible = (o: Option): boolean => !o.hidden;
  return {
    program: program.name(),
    globalFlags: [...program.options.filter(visible).map(flagOf), HELP],
    verbs: program.commands
      .filter((c) => !c.name().startsWith("__"))
      .map((c) => {
        const first = c.registeredArguments[0];
        return {
          name: c.name(),
          description: c.description(),
          flags: c.options.filter(visible).map(flagOf),
          paths: c.registeredArguments.length > 0 && !first?.argChoices,
          ...(first?.argChoices ? { argChoices: [...first.argChoices] } : {}),
        };
      }),
    completeVerb: COMPLETE_VERB,
  };
}

/** Every flag that takes a value, so the words typed can be told from the flags' values. */
export function valueFlags(spec: CompletionSpec): Set<string> {
  const all = [...spec.globalFlags, ...spec.verbs.flatMap((v) => v.flags)];
  return new Set(
    all.filter((f) => f.value).flatMap((f) => [f.long, f.short].filter((n): n is string => n !== undefined)),
  );
}

export function registerCompletion(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script (verbs, flags, format choices, profile and rule names)")
    .addArgument(new Argument("<shell>", "the shell to complete in").choices(COMPLETION_SHELL_NAMES))
    .action(async (shell: CompletionShell) => {
      // the scripts load when one is asked for; a Tab (below) needs only the program's flags
      const { COMPLETION_SHELLS } = await import("../render/completion/index.js");
      process.stdout.write(COMPLETION_SHELLS[shell](completionSpec(program)));
    });
  program
    .command(COMPLETE_VERB, { hidden: true })
    .description("names for completion scripts, one a line: profiles (flowrules.config.yaml) or rules (rules/)")
    .addArgument(new Argument("<list>").choices(LISTS))
    .addArgument(new Argument("[words...]", "the words typed so far, after --"))
    .action((list: CompletionListName, words: string[]) =>
      printNames(list, words, valueFlags(completionSpec(program))),
    );
}

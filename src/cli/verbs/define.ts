/**
 * The light half of a verb: its folder's flags.ts declares the command (`verbCommand`: its name, words, argument and
 * `--format`) and hands it here with the loader of its run.ts, which is imported only when the verb runs (never for
 * `--version`, `--help` or a Tab: docs/performance.md, "Start-up"). commander calls the action with `this` bound to
 * the command, so the run module reads the arguments and flags from it and parses them itself (./run-verb.ts): no
 * argument list is cast here.
 */
import type { Argument, Command, Option } from "commander";
import { formatOption } from "../flags.js";

/** What a verb's run.ts exports: one function of the command as commander parsed it. */
export interface VerbModule {
  run(command: Command): Promise<void>;
}

/** A verb's argument as commander spells it: `[paths...]`, its help and its default. */
export type VerbArgument = readonly [spec: string, help: string, fallback?: string | string[]];

/** The argument of the verbs that read rules: files or folders, `rules/` when none is given. */
export const RULE_PATHS: VerbArgument = ["[paths...]", "files or folders of *.yaml / *.yml", ["rules/"]];

/** What every verb declares first, in this order in its `--help`. */
export interface VerbHead {
  description: string;
  /** its argument, or commander's Argument where it has choices */
  argument?: VerbArgument | Argument;
  /** its `--format`: the names of its views (src/render/format-names.ts), or the option worded for the verb */
  format?: readonly string[] | Option;
}

/** The command of a verb, with its head declared: the verb's flags.ts adds its own flags to it. */
export function verbCommand(program: Command, name: string, head: VerbHead): Command {
  const cmd = program.command(name).description(head.description);
  const arg = head.argument;
  if (arg && !isSpelled(arg)) cmd.addArgument(arg);
  else if (arg) {
    const [spec, help, fallback] = arg;
    // a fresh copy of the default: commander hands the default array itself to the action
    cmd.argument(spec, help, Array.isArray(fallback) ? [...fallback] : fallback);
  }
  if (head.format) cmd.addOption(isNames(head.format) ? formatOption(head.format) : head.format);
  return cmd;
}

const isNames = (f: readonly string[] | Option): f is readonly string[] => Array.isArray(f);
const isSpelled = (a: VerbArgument | Argument): a is VerbArgument => Array.isArray(a);

/** Sets the command's action to "load ./run.js, then run it". */
export function defineVerb(cmd: Command, load: () => Promise<VerbModule>): Command {
  return cmd.action(async function (this: Command) {
    await (await load()).run(this);
  });
}

/**
 * The light half of a verb: its folder's flags.ts declares the command and hands it here with the loader of its
 * run.ts, which is imported only when the verb runs (never for `--version`, `--help` or a Tab: docs/performance.md,
 * "Start-up"). commander calls the action with `this` bound to the command, so the run module reads the arguments and
 * flags from it and parses them itself (./run-verb.ts): no argument list is cast here.
 */
import type { Command } from "commander";

/** What a verb's run.ts exports: one function of the command as commander parsed it. */
export interface VerbModule {
  run(command: Command): Promise<void>;
}

/** Sets the command's action to "load ./run.js, then run it". */
export function defineVerb(cmd: Command, load: () => Promise<VerbModule>): Command {
  return cmd.action(async function (this: Command) {
    await (await load()).run(this);
  });
}

/** `flowrules state show|clear`: a state dir's content and trust, or removing it (docs/operating.md, "State between runs"). */
import { Argument, Option, type Command } from "commander";
import { runLogged } from "../log/index.js";
import { processIO } from "../log/command-io.js";
import { commandLogger, withLogger } from "../log/index.js";
import { addOptions, apiKeyFrom, CONNECTION_FLAGS, pick, PLANNING_FLAGS, sourcesOf } from "./settings.js";

export function registerState(program: Command): void {
  const cmd = program
    .command("state")
    .description("what a --state dir holds (bookmarks, cached instances, whether its MAC verifies), or clear it")
    .addArgument(new Argument("<action>", "show: what the state holds; clear: remove it (refused while a run or a watcher uses it)").choices(["show", "clear"]))
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"));
  addOptions(cmd, { state: PLANNING_FLAGS.state, profile: CONNECTION_FLAGS.profile, config: CONNECTION_FLAGS.config }).action(
    async (action: "show" | "clear", opts: Record<string, unknown>, command: Command) => {
      const src = sourcesOf(opts, process.env);
      const dir = PLANNING_FLAGS.state.read(pick(PLANNING_FLAGS.state, src), src);
      const apiKey = apiKeyFrom(src);
      const io = withLogger(processIO(), commandLogger(command, process.env, undefined, apiKey ? [apiKey] : []));
      process.exitCode = await runLogged(io, "state", { action, ...(dir ? { dir } : {}) }, async (io) =>
        (await import("../commands/state-verb.js")).stateVerbCommand({ action, dir, format: opts.format as "text" | "json", apiKey }, io),
      );
    },
  );
}

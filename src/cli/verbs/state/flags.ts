/**
 * `flowrules state show|clear`: a state dir's content and trust, or removing it (docs/operating.md, "State between
 * runs"). Its flags; what it does when it runs is ./run.ts, loaded then.
 */
import { Argument, type Command } from "commander";
import { STATE_FORMAT_NAMES } from "../../../render/format-names.js";
import { addOptions, CONNECTION_FLAGS, PLANNING_FLAGS } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerState(program: Command): void {
  const cmd = verbCommand(program, "state", {
    description: "what a --state dir holds (bookmarks, cached instances, whether its MAC verifies), or clear it",
    argument: new Argument(
      "<action>",
      "show: what the state holds; clear: remove it (refused while a run or a watcher uses it)",
    ).choices(["show", "clear"]),
    format: STATE_FORMAT_NAMES,
  });
  defineVerb(
    addOptions(cmd, {
      state: PLANNING_FLAGS.state,
      profile: CONNECTION_FLAGS.profile,
      config: CONNECTION_FLAGS.config,
    }),
    () => import("./run.js"),
  );
}

/** `flowrules watch`: its flags; what it does when it runs (flags to settings, signals, the loop) is ./run.ts. */
import type { Command } from "commander";
import { addConnectionOptions } from "../../connection.js";
import { addOptions, addPlanningOptions, WATCH_FLAGS } from "../../flags.js";
import { addNotifyOption } from "../../operations.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerWatch(program: Command): void {
  const cmd = verbCommand(program, "watch", {
    description:
      "run cycles of plan (and with --apply, apply) until stopped, polling for what changed within a share of the rate limit",
    argument: ["[paths...]", "rule files or folders", ["rules/"]],
  });
  addOptions(cmd, WATCH_FLAGS);
  // the planning flags of `plan` and `apply --auto-approve`; --state is required here (the watcher's folder)
  addPlanningOptions(cmd, "plan");
  addNotifyOption(cmd);
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}

/**
 * `flowrules revert [JOURNAL_OR_PLAN]`: its flags; what it does when it runs is ./run.ts, loaded then
 * (docs/forecast.md, "Revert").
 */
import type { Command } from "commander";
import { addConnectionOptions } from "../../connection.js";
import { addOptions, PLANNING_FLAGS } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerRevert(program: Command): void {
  const cmd = verbCommand(program, "revert", {
    description:
      "write a plan that sets back what an applied plan's saves wrote, where the fields still hold it; lists what cannot be undone",
    argument: ["[journal-or-plan]", "an applied plan file, or its journal (<plan>.journal.jsonl)"],
  })
    .option("--cycle <id>", "with --state: a watcher's cycle, as `flowrules history` names it")
    .option("--out <file>", "where to write the revert plan (default: beside the plan, <plan>.revert.json)")
    .option("-q, --quiet", "no note on stderr");
  addOptions(cmd, { state: PLANNING_FLAGS.state }, { state: "with --cycle: the watcher's state dir" });
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}

/** `flowrules init`: starter rule and test files per workflow. Its flags; what it does is ./run.ts, loaded when it runs. */
import type { Command } from "commander";
import { addConnectionOptions } from "../../connection.js";
import { collect } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerInit(program: Command): void {
  const cmd = verbCommand(program, "init", {
    description: "write a starter rule file and test file per workflow (never overwrites)",
    argument: ["[dir]", "folder to write into", "rules"],
  }).option(
    "--workflow <id-or-name>",
    "a workflow to start from (repeatable; default: every workflow the key sees)",
    collect,
    [],
  );
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}

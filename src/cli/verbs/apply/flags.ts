/** `flowrules apply`: its flags; what it does when it runs (prompt, signals, the apply) is ./run.ts, loaded then. */
import type { Command } from "commander";
import { APPLY_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { addOptions, addPlanningOptions, APPLYING_FLAGS, formatOption } from "../../flags.js";
import { addNotifyOption } from "../../operations.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerApply(program: Command): void {
  const cmd = verbCommand(program, "apply", {
    description: "execute a saved plan exactly once, or plan and apply rules with --auto-approve",
    argument: [
      "[paths...]",
      "a plan.json, or rule files/folders (with --auto-approve, or confirmed on a terminal)",
      ["rules/"],
    ],
  });
  addOptions(cmd, APPLYING_FLAGS)
    .option(
      "--detailed-exitcode",
      "exit 0 when nothing was applied, 2 when changes were applied, 1 on any stale or failed change",
    )
    .option("-q, --quiet", "no progress on stderr")
    .addOption(
      formatOption(
        APPLY_FORMAT_NAMES,
        "the result on stdout: text, or json (one document, schemas/apply-result.schema.json)",
      ),
    );
  addPlanningOptions(cmd, "apply");
  addNotifyOption(cmd);
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}

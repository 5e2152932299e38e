/** `flowrules show <plan.json> [--format …]`: a saved plan rendered again, with no request. */
import type { Command } from "commander";
import { PLAN_FORMAT_NAMES } from "../../../render/format-names.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerShow(program: Command): void {
  const cmd = verbCommand(program, "show", {
    description: "render a saved plan (flowrules plan --out) in any plan format, without any request",
    argument: ["<plan.json>", "a plan written by `flowrules plan --out`"],
    format: PLAN_FORMAT_NAMES,
  });
  defineVerb(cmd, () => import("./run.js"));
}

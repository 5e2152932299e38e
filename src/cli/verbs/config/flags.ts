/**
 * `flowrules config [--check]`: the settings in effect and where each came from (docs/operating.md, "Which settings am I using?"). It takes the
 * flags those settings take, so `flowrules config --rate-limit 0` shows what a run with that flag would use. What it
 * does when it runs is ./run.ts, loaded then.
 */
import type { Command } from "commander";
import { CONFIG_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { addOptions, formatOption, OUTPUT_FLAGS, PLANNING_FLAGS } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerConfig(program: Command): void {
  const cmd = verbCommand(program, "config", {
    description:
      "show the settings in effect and where each comes from (flag, variable, profile, default); --check tries the service",
    argument: [
      "[paths...]",
      "with --check: the rules whose workflows the key must see (files or folders of *.yaml / *.yml)",
      ["rules/"],
    ],
  })
    .option(
      "--check",
      "make one request (the workflow list) and say whether the URL and the API key work and the key sees a workflow the rules name",
    )
    .addOption(formatOption(CONFIG_FORMAT_NAMES));
  addOptions(cmd, {
    optOutTag: PLANNING_FLAGS.optOutTag,
    workflows: PLANNING_FLAGS.workflows,
    state: PLANNING_FLAGS.state,
    notify: OUTPUT_FLAGS.notify,
  });
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}

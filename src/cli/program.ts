/**
 * commander wiring: one file per verb registers its command; this file only assembles them.
 *
 * `--help` builds this whole program (`--version` alone and a completion Tab do not), so a verb's flags.ts
 * (./verbs/<verb>/) declares only its flags, and its action imports what the verb does (./verbs/<verb>/run.ts) when it
 * runs (./verbs/define.ts).
 * test/cli/startup.test.ts checks what those three load (CONTRIBUTING.md, "Adding a verb").
 */
import { Command } from "commander";
import { VERSION, VERSION_FLAGS } from "../model/version.js";
import { registerValidate } from "./verbs/validate/flags.js";
import { registerPlan } from "./verbs/plan/flags.js";
import { registerApply } from "./verbs/apply/flags.js";
import { registerShow } from "./verbs/show/flags.js";
import { registerTest } from "./verbs/test/flags.js";
import { registerExplain } from "./verbs/explain/flags.js";
import { registerSandbox } from "./verbs/sandbox/flags.js";
import { registerWatch } from "./verbs/watch/flags.js";
import { registerHistory } from "./verbs/history/flags.js";
import { registerState } from "./verbs/state/flags.js";
import { registerConfig } from "./verbs/config/flags.js";
import { registerWorkflows } from "./verbs/workflows/flags.js";
import { registerDescribe } from "./verbs/describe/flags.js";
import { registerInit } from "./verbs/init/flags.js";
import { registerPull } from "./verbs/pull/flags.js";
import { registerForecast } from "./verbs/forecast/flags.js";
import { registerRevert } from "./verbs/revert/flags.js";
import { addLogFormatOption } from "../log/option.js";
import { registerCompletion } from "./completion.js";
import { addExamples } from "./examples.js";
import { addColorOptions } from "./flags.js";

export function buildProgram(): Command {
  const program = new Command("flowrules")
    .description("Validate, plan and apply YAML rules against a Workflow Instance Service.")
    .version(VERSION, VERSION_FLAGS.join(", "), "print the flowrules version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // global: accepted before or after any verb, read by each verb with optsWithGlobals()
  addLogFormatOption(program);
  addColorOptions(program);
  registerValidate(program);
  registerPlan(program);
  registerApply(program);
  registerForecast(program);
  registerRevert(program);
  registerShow(program);
  registerTest(program);
  registerExplain(program);
  registerWorkflows(program);
  registerDescribe(program);
  registerInit(program);
  registerPull(program);
  registerWatch(program);
  registerHistory(program);
  registerState(program);
  registerConfig(program);
  registerSandbox(program);
  addExamples(program);
  program.addHelpText(
    "after",
    "\nEach setting comes from its flag, else its environment variable, else the profile of flowrules.config.yaml\n" +
      "(--profile NAME), else its default. `flowrules <command> --help` names them; docs/operating.md has profiles.\n",
  );
  // last: the completion scripts are generated from every verb registered above
  registerCompletion(program);
  return program;
}

/**
 * commander wiring: one file per verb registers its command; this file only assembles them.
 *
 * Every `flowrules` run builds this whole program — `--version`, `--help` and a completion Tab too — so a verb's file
 * declares only its flags, and its action imports what the verb does (./run/<verb>.ts) when it runs.
 * test/cli/startup.test.ts checks what those three load (CONTRIBUTING.md, "Adding a verb").
 */
import { Command } from "commander";
import { VERSION, VERSION_FLAGS } from "../model/version.js";
import { registerValidate } from "./validate.js";
import { registerPlan } from "./plan.js";
import { registerApply } from "./apply.js";
import { registerShow } from "./show.js";
import { registerTest } from "./test.js";
import { registerExplain } from "./explain.js";
import { registerSandbox } from "./sandbox.js";
import { registerWatch } from "./watch.js";
import { registerHistory } from "./history.js";
import { registerForecast } from "./forecast.js";
import { registerRevert } from "./revert.js";
import { registerState } from "./state-verb.js";
import { registerConfig } from "./config.js";
import { registerDescribe, registerWorkflows } from "./workflows.js";
import { registerInit, registerPull } from "./init.js";
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

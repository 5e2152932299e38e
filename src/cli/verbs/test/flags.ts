/** `flowrules test [paths...]`: its flags; what it does when it runs is ./run.ts, loaded then. */
import type { Command } from "commander";
import { TEST_RESULT_FORMAT_NAMES } from "../../../render/format-names.js";
import { addProfileOptions, collect, formatOption, workflowsOption } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerTest(program: Command): void {
  const cmd = verbCommand(program, "test", {
    description: "run rule tests (*.test.yaml beside the rules) against fixture instances, no network",
    argument: ["[paths...]", "folders, rule files or test files", ["rules/"]],
  })
    .option("--junit <file>", "also write the results as JUnit XML to this file (for CI)")
    .addOption(
      formatOption(
        TEST_RESULT_FORMAT_NAMES,
        "the results on stdout: text, or json (one document, schemas/test-results.schema.json)",
      ),
    )
    .option("--require-tests", "fail for every loaded rule that no test case names")
    .addOption(workflowsOption("workflow catalog resolving step and field names (default flowrules.workflows.json)"))
    .option(
      "--rule <name>",
      "run only the cases of this rule; a glob such as 'approve-*' selects several (repeatable)",
      collect,
      [],
    );
  defineVerb(addProfileOptions(cmd), () => import("./run.js"));
}

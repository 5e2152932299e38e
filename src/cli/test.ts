import { Option, type Command } from "commander";
import { TEST_RESULT_FORMAT_NAMES, type TestResultsFormat } from "../render/test-results/index.js";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { addProfileOptions, catalogSettings, workflowsOption } from "./settings.js";

export function registerTest(program: Command): void {
  const cmd = program
    .command("test")
    .description("run rule tests (*.test.yaml beside the rules) against fixture instances, no network")
    .argument("[paths...]", "folders, rule files or test files", ["rules/"])
    .option("--junit <file>", "also write the results as JUnit XML to this file (for CI)")
    .addOption(new Option("--format <format>", "the results on stdout: text, or json (one document, schemas/test-results.schema.json)").choices(TEST_RESULT_FORMAT_NAMES).default("text"))
    .option("--require-tests", "fail for every loaded rule that no test case names")
    .addOption(workflowsOption("workflow catalog resolving step and field names (default flowrules.workflows.json)"))
    .option("--rule <name>", "run only the cases of this rule; a glob such as 'approve-*' selects several (repeatable)", (v: string, acc: string[]) => [...acc, v], []);
  addProfileOptions(cmd)
    .action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
      const io = withLogger(processIO(), commandLogger(command));
      const { workflows } = catalogSettings(opts, io.env);
      process.exitCode = await runLogged(io, "test", { paths }, async (io) => (await import("../commands/test.js")).testCommand(
        {
          paths,
          ...(typeof opts.junit === "string" ? { junit: opts.junit } : {}),
          requireTests: opts.requireTests === true,
          rules: (opts.rule as string[] | undefined) ?? [],
          format: opts.format as TestResultsFormat,
          ...(workflows !== undefined ? { workflows } : {}),
        },
        io,
      ));
    });
}

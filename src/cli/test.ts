import type { Command } from "commander";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { addProfileOptions, catalogSettings, workflowsOption } from "./settings.js";

export function registerTest(program: Command): void {
  const cmd = program
    .command("test")
    .description("run rule tests (*.test.yaml beside the rules) against fixture instances, no network")
    .argument("[paths...]", "folders, rule files or test files", ["rules/"])
    .option("--junit <file>", "also write the results as JUnit XML to this file (for CI)")
    .option("--require-tests", "fail for every loaded rule that no test case names")
    .addOption(workflowsOption("workflow catalog resolving step and field names (default flowrules.workflows.json)"));
  addProfileOptions(cmd)
    .action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
      const io = withLogger(processIO(), commandLogger(command));
      const { workflows } = catalogSettings(opts, io.env);
      process.exitCode = await runLogged(io, "test", { paths }, async (io) => (await import("../commands/test.js")).testCommand(
        {
          paths,
          ...(typeof opts.junit === "string" ? { junit: opts.junit } : {}),
          requireTests: opts.requireTests === true,
          ...(workflows !== undefined ? { workflows } : {}),
        },
        io,
      ));
    });
}

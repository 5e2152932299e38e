import { Option, type Command } from "commander";
import { planCommand } from "../commands/plan.js";
import { processIO } from "../commands/io.js";
import { addConnectionOptions, connectionSettings } from "./connection.js";

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function registerPlan(program: Command): void {
  const cmd = program
    .command("plan")
    .description("show the API calls the rules imply against live data (dry run)")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(new Option("--format <format>", "output format").choices(["text", "markdown", "json"]).default("text"))
    .option("--out <file>", "also write the JSON plan to this file (for `flowrules apply <file>`)")
    .option("--report-dir <dir>", "also write each report as <rule>.csv and <rule>.json into this folder")
    .option("--detailed-exitcode", "exit 0 when there is nothing to change, 2 when there are changes, 1 on error")
    .option("--rule <name>", "plan only this rule (repeatable)", collect, [])
    .option("-q, --quiet", "no progress and no request count on stderr");
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>) => {
    const io = processIO();
    process.exitCode = await planCommand(
      {
        paths,
        format: opts.format as "text" | "markdown" | "json",
        ...(typeof opts.out === "string" ? { out: opts.out } : {}),
        ...(typeof opts.reportDir === "string" ? { reportDir: opts.reportDir } : {}),
        detailedExitcode: opts.detailedExitcode === true,
        rules: (opts.rule as string[] | undefined) ?? [],
        quiet: opts.quiet === true,
        connection: connectionSettings(opts, io.env),
      },
      io,
    );
  });
}

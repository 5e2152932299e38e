/** `flowrules show <plan.json> [--format …]`: a saved plan rendered again, with no request. */
import { Option, type Command } from "commander";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";

export function registerShow(program: Command): void {
  program
    .command("show")
    .description("render a saved plan (flowrules plan --out) in any plan format, without any request")
    .argument("<plan.json>", "a plan written by `flowrules plan --out`")
    .addOption(new Option("--format <format>", "output format").choices(Object.keys(PLAN_FORMATS)).default("text"))
    .action(async (file: string, opts: Record<string, unknown>, command: Command) => {
      const io = withLogger(processIO(), commandLogger(command));
      process.exitCode = await runLogged(io, "show", { file }, async (io) =>
        (await import("../commands/show.js")).showCommand({ file, format: opts.format as PlanFormat }, io),
      );
    });
}

import { EXPLAIN_FORMAT_NAMES } from "../render/explain/index.js";
import { Option, type Command } from "commander";
import type { ExplainFormat } from "../commands/explain.js";
import { runLogged } from "../log/index.js";
import { addConnectionOptions } from "./connection.js";
import { addOptOutOption } from "./operations.js";
import { connectionFrom, optOutTagFrom, serviceIO, sourcesOf } from "./settings.js";

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function registerExplain(program: Command): void {
  const cmd = program
    .command("explain")
    .description("why one live instance matches each rule or not (GET only, never a change)")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .requiredOption("--instance <id>", "the instance to explain")
    .option("--rule <name>", "explain only this rule; a glob such as 'approve-*' selects several (repeatable)", collect, [])
    .addOption(new Option("--format <format>", "output format").choices(EXPLAIN_FORMAT_NAMES).default("text"));
  addOptOutOption(cmd);
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
    const src = sourcesOf(opts, process.env);
    const connection = connectionFrom(src);
    const optOut = optOutTagFrom(src);
    const io = serviceIO(command, connection);
    // each command's modules load when it runs, not for every command (docs/performance.md, "Memory")
    const { explainCommand, parseInstanceId } = await import("../commands/explain.js");
    const instance = parseInstanceId(opts.instance);
    process.exitCode = await runLogged(io, "explain", { paths, instance, base_url: connection.baseUrl, ...(src.profile ? { profile: src.profile.name } : {}) }, (io) => explainCommand(
      {
        paths,
        instance,
        rules: (opts.rule as string[] | undefined) ?? [],
        format: opts.format as ExplainFormat,
        connection,
        ...(optOut ? { optOutTag: optOut } : {}),
        ...(src.profile ? { profile: src.profile.name } : {}),
      },
      io,
    ));
  });
}

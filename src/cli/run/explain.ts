/** What `flowrules explain` does when it runs (its flags: ../explain.ts). */
import type { Command } from "commander";
import { runLogged } from "../../log/index.js";
import type { ExplainFormat } from "../../render/format-names.js";
import { connectionFrom, optOutTagFrom, serviceIO, sourcesOf } from "../settings.js";

export async function explain(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const src = sourcesOf(opts, process.env);
  const connection = connectionFrom(src);
  const optOut = optOutTagFrom(src);
  const io = serviceIO(command, connection);
  // the engine loads once the settings are known to be good
  const { explainCommand, parseInstanceId } = await import("../../commands/explain.js");
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
}

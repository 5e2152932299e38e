/** What `flowrules config` does when it runs (its flags: ../config.ts): the report from ../settings.ts, then the check. */
import type { Command } from "commander";
import { processIO } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import type { ConfigFormat } from "../../render/format-names.js";
import type { ConfigCommandOptions } from "../../commands/config.js";
import { colorOf } from "../flags.js";
import { configReport, connectionSettings } from "../settings.js";

export async function config(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const report = configReport(opts, process.env);
  let check: ConfigCommandOptions["check"];
  let secrets: string[] = [];
  if (opts.check === true) {
    try {
      const connection = connectionSettings(opts, process.env);
      secrets = [connection.apiKey];
      const key = report.settings.find((s) => s.setting === "api key");
      check = { connection, keyFrom: key?.source ?? "the API key's variable" };
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      // a refusal the report already shows (the key's line) is not said twice
      const shown = report.settings.find((s) => s.problem === err.message);
      check = { cannot: shown ? `the ${shown.setting} is refused (above)` : err.message };
    }
  }
  const io = withLogger(processIO(colorOf(command)), commandLogger(command, process.env, undefined, secrets));
  process.exitCode = await runLogged(io, "config", { check: opts.check === true }, async (io) =>
    (await import("../../commands/config.js")).configCommand({ report, format: opts.format as ConfigFormat, ...(check ? { check, rulePaths: paths } : {}) }, io),
  );
}

/** What `flowrules config` does when it runs (its flags: ./flags.ts): the report from ../../settings.ts, then the check. */
import { z } from "zod";
import type { ConfigCommandOptions } from "../../../commands/config.js";
import { UserError } from "../../../model/errors.js";
import { CONFIG_FORMAT_NAMES } from "../../../render/format-names.js";
import { configReport } from "../../config-report.js";
import { connectionSettings } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "config",
  args: Paths,
  flags: z.object({ check: z.boolean().default(false), format: z.enum(CONFIG_FORMAT_NAMES) }),
  start({ args: [paths], flags, raw, command, env }) {
    const report = configReport(raw, env);
    let check: ConfigCommandOptions["check"];
    let secrets: string[] = [];
    if (flags.check) {
      try {
        const connection = connectionSettings(raw, env);
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
    return {
      io: verbIO(command, secrets),
      fields: { check: flags.check },
      exec: async (io) =>
        (await import("../../../commands/config.js")).configCommand(
          { report, format: flags.format, ...(check ? { check, rulePaths: paths } : {}) },
          io,
        ),
    };
  },
});

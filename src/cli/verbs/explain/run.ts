/** What `flowrules explain` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { EXPLAIN_FORMAT_NAMES } from "../../../render/format-names.js";
import { connectionFrom, optOutTagFrom, sourcesOf } from "../../settings.js";
import { Paths, Repeated, verbIO, verbRun } from "../run-verb.js";

const Flags = z.object({ instance: z.string(), rule: Repeated, format: z.enum(EXPLAIN_FORMAT_NAMES) });

export const run = verbRun({
  name: "explain",
  args: Paths,
  flags: Flags,
  async start({ args: [paths], flags, raw, command, env }) {
    const src = sourcesOf(raw, env);
    const connection = connectionFrom(src);
    const optOutTag = optOutTagFrom(src);
    const io = verbIO(command, [connection.apiKey]);
    // the engine loads once the settings are known to be good
    const { explainCommand, parseInstanceId } = await import("../../../commands/explain.js");
    const instance = parseInstanceId(flags.instance);
    const profile = src.profile?.name;
    return {
      io,
      fields: { paths, instance, base_url: connection.baseUrl, ...(profile ? { profile } : {}) },
      exec: (io) =>
        explainCommand(
          { paths, instance, rules: flags.rule, format: flags.format, connection, optOutTag, profile },
          io,
        ),
    };
  },
});

/** What `flowrules state show|clear` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { STATE_FORMAT_NAMES } from "../../../render/format-names.js";
import { PLANNING_FLAGS } from "../../flags.js";
import { apiKeyFrom, pathSetting, sourcesOf } from "../../settings.js";
import { verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "state",
  args: z.tuple([z.enum(["show", "clear"])]),
  flags: z.object({ format: z.enum(STATE_FORMAT_NAMES) }),
  start({ args: [action], flags, raw, command, env }) {
    const src = sourcesOf(raw, env);
    const dir = pathSetting(PLANNING_FLAGS.state, src);
    const apiKey = apiKeyFrom(src);
    return {
      io: verbIO(command, [apiKey]),
      fields: { action, ...(dir ? { dir } : {}) },
      exec: async (io) =>
        (await import("../../../commands/state-verb.js")).stateVerbCommand({ action, dir, ...flags, apiKey }, io),
    };
  },
});

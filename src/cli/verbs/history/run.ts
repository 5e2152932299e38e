/** What `flowrules history` does when it runs (its flags: ./flags.ts; the reading: src/watch/history.ts). */
import { z } from "zod";
import { DEFAULT_HISTORY_CYCLES } from "../../../model/defaults.js";
import { UserError } from "../../../model/errors.js";
import { ENV } from "../../../model/settings-table.js";
import { HISTORY_FORMAT_NAMES } from "../../../render/format-names.js";
import { PLANNING_FLAGS } from "../../flags.js";
import { pathSetting, sourcesOf } from "../../settings.js";
import { NoArgs, verbIO, verbRun, wholeFlag } from "../run-verb.js";

const Flags = z.object({
  last: wholeFlag(1, "--last must be a whole number of cycles, at least 1").optional(),
  format: z.enum(HISTORY_FORMAT_NAMES),
});

export const run = verbRun({
  name: "history",
  args: NoArgs,
  flags: Flags,
  start({ flags, raw, command, env }) {
    const stateDir = pathSetting(PLANNING_FLAGS.state, sourcesOf(raw, env));
    if (!stateDir) throw new UserError(`history needs the watcher's state dir: pass --state DIR, set ${ENV.state} or give the profile a state`);
    const { last = DEFAULT_HISTORY_CYCLES, format } = flags;
    return {
      io: verbIO(command),
      fields: { state: stateDir, last },
      exec: async (io) => (await import("../../../commands/history.js")).historyCommand({ stateDir, last, format }, io),
    };
  },
});

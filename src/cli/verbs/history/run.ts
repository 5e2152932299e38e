/** What `flowrules history` does when it runs (its flags: ./flags.ts; the reading: src/watch/history.ts). */
import { z } from "zod";
import { DEFAULT_HISTORY_CYCLES } from "../../../model/defaults.js";
import { readDuration } from "../../../text/duration.js";
import { UserError } from "../../../model/errors.js";
import { ENV } from "../../../model/settings-table.js";
import { HISTORY_FORMAT_NAMES } from "../../../render/format-names.js";
import { PLANNING_FLAGS } from "../../flags.js";
import { pathSetting, sourcesOf } from "../../settings.js";
import { NoArgs, verbIO, verbRun, wholeFlag } from "../run-verb.js";
import { defined } from "../../../model/defined.js";

const Flags = z.object({
  last: wholeFlag(1, "--last must be a whole number of cycles, at least 1").optional(),
  /** a time, or a duration before now */
  since: z
    .string()
    .transform((text, ctx) => {
      const ago = readDuration(text, { timer: false });
      const at = ago.ok ? Date.now() - ago.ms : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
      if (Number.isFinite(at)) return new Date(at);
      ctx.addIssue({
        code: "custom",
        message: `--since must be a time (2026-11-25T13:00Z) or a duration ago (90m, 2h, 7d); got ${JSON.stringify(text)}`,
      });
      return z.NEVER;
    })
    .optional(),
  rule: z.string().optional(),
  instance: z
    .string()
    .regex(/^\d+$/, { message: "--instance must be an instance id (a whole number)" })
    .transform(Number)
    .optional(),
  format: z.enum(HISTORY_FORMAT_NAMES),
});

export const run = verbRun({
  name: "history",
  args: NoArgs,
  flags: Flags,
  start({ flags, raw, command, env }) {
    const stateDir = pathSetting(PLANNING_FLAGS.state, sourcesOf(raw, env));
    if (!stateDir)
      throw new UserError(
        `history needs the watcher's state dir: pass --state DIR, set ${ENV.state} or give the profile a state`,
      );
    const { last = DEFAULT_HISTORY_CYCLES, rule, instance, ...rest } = flags;
    const filter = defined({ rule, instance });
    return {
      io: verbIO(command),
      fields: { state: stateDir, last, ...(rest.since ? { since: rest.since.toISOString() } : {}) },
      exec: async (io) =>
        (await import("../../../commands/history.js")).historyCommand({ stateDir, last, ...rest, filter }, io),
    };
  },
});

/**
 * What `flowrules apply` does when it runs (its flags: ./flags.ts): the terminal prompt; the logic lives in
 * src/commands/apply.ts.
 *
 * Signals (../../signals.ts): the first SIGINT/SIGTERM/SIGHUP stops starting changes (those in flight finish and are
 * journalled, the summary is printed, the lock released); the changes not started are deferred, as at
 * --max-duration, so the exit code is 0 unless something failed or went stale, and the same apply again resumes them
 * (docs/operating.md, "Applying safely"). A second signal exits at once; the lock file is removed on exit either way.
 */
import { createInterface } from "node:readline/promises";
import { z } from "zod";
import type { Confirm } from "../../../commands/apply.js";
import { APPLY_FORMAT_NAMES } from "../../../render/format-names.js";
import { applyingFrom, runFields, runOptions, runSettingsOf, sourcesOf } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";

/** `apply`'s own output flag; its applying settings are the table's APPLYING_SETTINGS (../../settings.ts). */
const Flags = z.object({ format: z.enum(APPLY_FORMAT_NAMES).optional() });

function terminalConfirm(): Confirm {
  return {
    isTTY: process.stdin.isTTY === true,
    async ask(question) {
      // the question goes to stderr: stdout carries the plan
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      // Ctrl-C or Ctrl-D at the prompt is a "no" (readline would otherwise leave the question pending forever)
      const cancel = new AbortController();
      rl.on("SIGINT", () => cancel.abort());
      rl.on("close", () => cancel.abort());
      try {
        return await rl.question(question, { signal: cancel.signal });
      } catch {
        return "";
      } finally {
        rl.close();
      }
    },
  };
}

export const run = verbRun({
  name: "apply",
  args: Paths,
  flags: Flags,
  start({ args: [paths], flags, raw, command, env }) {
    const src = sourcesOf(raw, env);
    const run = runSettingsOf(src);
    const applying = applyingFrom(src);
    return {
      io: verbIO(command, [run.connection.apiKey]),
      fields: { paths, auto_approve: applying.autoApprove, ...runFields(run) },
      stops: {},
      // the same planning settings as `plan`, whole
      exec: async (io, signal) =>
        (await import("../../../commands/apply.js")).applyCommand(
          { paths, ...applying, ...runOptions(run), ...flags, confirm: terminalConfirm(), signal },
          io,
        ),
    };
  },
});

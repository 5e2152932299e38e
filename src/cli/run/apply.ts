/**
 * What `flowrules apply` does when it runs (its flags: ../apply.ts): the terminal prompt; the logic lives in
 * src/commands/apply.ts.
 *
 * Signals (../signals.ts): the first SIGINT/SIGTERM/SIGHUP stops starting changes (those in flight finish and are
 * journalled, the summary is printed, the lock released); the changes not started are deferred, as at
 * --max-duration, so the exit code is 0 unless something failed or went stale, and the same apply again resumes them
 * (docs/operating.md, "Applying safely"). A second signal exits at once; the lock file is removed on exit either way.
 */
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { z } from "zod";
import type { Confirm } from "../../commands/apply.js";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { APPLY_FORMAT_NAMES } from "../../render/format-names.js";
import { applyingFrom, runFields, runSettingsOf, serviceIO, sourcesOf } from "../settings.js";
import { interruptions } from "../signals.js";

/** `apply`'s own output flag; its applying settings are the lines of APPLYING_FLAGS, read in ../settings.ts. */
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

export async function apply(paths: string[], raw: Record<string, unknown>, command: Command): Promise<void> {
  const parsed = Flags.safeParse(raw);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const src = sourcesOf(raw, process.env);
  const run = runSettingsOf(src);
  const applying = applyingFrom(src);
  const io = serviceIO(command, run.connection);
  const { signal, dispose } = interruptions(io);
  try {
    const fields = { paths, auto_approve: applying.autoApprove, ...runFields(run) };
    process.exitCode = await runLogged(io, "apply", fields, async (io) => (await import("../../commands/apply.js")).applyCommand(
      {
        paths,
        ...applying,
        // the same planning settings as `plan`, whole (src/cli/settings.ts)
        ...run.planning,
        ...(run.profile ? { profile: run.profile } : {}),
        ...(f.format ? { format: f.format } : {}),
        detailedExitcode: run.output.detailedExitcode,
        quiet: run.output.quiet,
        connection: run.connection,
        ...(run.output.notify.length > 0 ? { notify: { urls: run.output.notify } } : {}),
        confirm: terminalConfirm(),
        signal,
      },
      io,
    ));
  } finally {
    dispose();
  }
}

/** `flowrules state show|clear --state DIR`: what a state dir holds, and removing it (src/state/show.ts). */
import { EXIT_OK, UserError } from "../model/errors.js";
import type { CommandIO } from "../log/command-io.js";
import { clearText, STATE_FORMATS, type StateFormat } from "../render/state/index.js";
import { clearStateDir, describeStateDir } from "../state/show.js";
import { ENV } from "../model/env-names.js";

export interface StateVerbOptions {
  action: "show" | "clear";
  /** --state, its variable or the profile's state */
  dir: string | undefined;
  format: StateFormat;
  /** the API key, when one is set: the MAC is checked with it */
  apiKey: string | undefined;
}

export async function stateVerbCommand(opts: StateVerbOptions, io: CommandIO): Promise<number> {
  if (opts.dir === undefined || opts.dir.trim() === "")
    throw new UserError(`state ${opts.action} needs --state DIR (or ${ENV.state}, or a profile's state)`);
  if (opts.action === "show") {
    const report = await describeStateDir(opts.dir, opts.apiKey);
    io.log?.event("state.shown", {
      dir: opts.dir,
      size_bytes: report.size_bytes,
      verifies: report.verifies,
      workflows: report.workflows.length,
    });
    io.stdout(STATE_FORMATS[opts.format](report));
    return EXIT_OK;
  }
  const cleared = await clearStateDir(opts.dir);
  io.log?.event("state.cleared", {
    dir: opts.dir,
    files: cleared.removed.length,
    bytes: cleared.removed.reduce((s, f) => s + f.bytes, 0),
  });
  if (opts.format === "json") io.stdout(`${JSON.stringify(cleared, null, 2)}\n`);
  else io.stdout(clearText(cleared));
  return EXIT_OK;
}

/** What `flowrules revert` does when it runs (its flags: ../revert.ts). */
import type { Command } from "commander";
import { z } from "zod";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { connectionFrom, PLANNING_READS, serviceIO, sourcesOf } from "../settings.js";
import { PLANNING_FLAGS } from "../flags.js";
import { pick } from "../sources.js";

const Flags = z.object({
  cycle: z.string().optional(),
  out: z.string().optional(),
  state: z.string().optional(),
  quiet: z.boolean().optional(),
});

export async function revert(
  source: string | undefined,
  opts: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const parsed = Flags.safeParse(opts);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const src = sourcesOf(opts, process.env);
  const connection = connectionFrom(src);
  const io = serviceIO(command, connection);
  // --state only with --cycle: a state from the environment or a profile does not turn a plan's revert into a cycle's
  const stateDir = f.cycle !== undefined ? PLANNING_READS.state(pick(PLANNING_FLAGS.state, src), src) : f.state;
  process.exitCode = await runLogged(
    io,
    "revert",
    { ...(source ? { source } : {}), base_url: connection.baseUrl },
    async (io) =>
      (await import("../../commands/revert.js")).revertCommand(
        {
          ...(source !== undefined ? { source } : {}),
          ...(stateDir !== undefined ? { stateDir } : {}),
          ...(f.cycle !== undefined ? { cycle: f.cycle } : {}),
          ...(f.out !== undefined ? { out: f.out } : {}),
          connection,
          quiet: f.quiet === true,
        },
        io,
      ),
  );
}

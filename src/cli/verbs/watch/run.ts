/**
 * What `flowrules watch` does when it runs (its flags: ./flags.ts); the loop lives in src/watch (docs/watch.md). Its
 * option parsing is this one function (watchFlags), which a reload calls again (flags, environment and the config
 * file, read anew).
 *
 * Signals (../../signals.ts): SIGTERM/SIGINT stop the loop (no new request; those in flight finish; state written; lock
 * released; exit 0 within 10 s), a second one exits at once; SIGHUP reloads the rules and the config between cycles.
 */
import { UserError } from "../../../model/errors.js";
import { defined } from "../../../model/defined.js";
import { durationText } from "../../../text/duration.js";
import { ENV } from "../../../model/settings-table.js";
import type { WatchCommandOptions } from "../../../commands/watch.js";
import { MIN_INTERVAL_MS } from "../../../watch/settings.js";
import { ReloadRequests } from "../../../watch/types.js";
import { runSettingsOf, sourcesOf, watchingFrom } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";
import { z } from "zod";

/**
 * Flags, environment and profile → the watch settings (everything but the signal). The planning settings are those
 * of `plan` and `apply --auto-approve`, and the watcher's own the lines of WATCH_FLAGS, both resolved by the one
 * settings table (../../settings.ts) and handed over whole.
 */
export function watchFlags(
  paths: string[],
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Omit<WatchCommandOptions, "signal" | "reloads" | "reread"> {
  const src = sourcesOf(raw, env);
  const run = runSettingsOf(src);
  const watching = watchingFrom(src);
  const stateDir = run.planning.state;
  if (!stateDir)
    throw new UserError(
      `watch needs a state dir: pass --state DIR, set ${ENV.state} or give the profile a state (it keeps the bookmarks, the lock and the journals)`,
    );
  if (run.planning.changedSince !== undefined)
    throw new UserError(
      "--changed-since does not go with watch: a watcher plans every rule it loads, cycle after cycle",
    );
  // test-only: lets tests poll faster than production ever should (docs/watch.md)
  const minRaw = env[ENV.watchMinIntervalMs];
  const minIntervalMs = minRaw !== undefined && /^\d+$/.test(minRaw) ? Number(minRaw) : MIN_INTERVAL_MS;
  if (watching.intervalMs !== undefined && watching.intervalMs < minIntervalMs) {
    throw new UserError(`--interval must be at least ${durationText(minIntervalMs)}, got "${String(raw.interval)}"`);
  }
  const backoffRaw = env[ENV.watchMaxBackoffMs];
  const urls = run.output.notify;
  return {
    paths,
    planning: run.planning,
    ...defined({ profile: run.profile }),
    stateDir,
    ...watching,
    ...(urls.length > 0 ? { notify: { urls } } : {}),
    connection: run.connection,
    minIntervalMs,
    ...(backoffRaw !== undefined && /^\d+$/.test(backoffRaw) ? { maxBackoffMs: Number(backoffRaw) } : {}),
    // watched for a change with the rules, whether it exists yet or not
    configFile: src.config.abs,
  };
}

export const run = verbRun({
  name: "watch",
  args: Paths,
  // its flags are all the table's (planning, connection, WATCH_SETTINGS), read by watchFlags
  flags: z.object({}),
  start({ args: [paths], raw, command, env }) {
    const settings = watchFlags(paths, raw, env);
    const reloads = new ReloadRequests();
    return {
      io: verbIO(command, [settings.connection.apiKey]),
      fields: { paths, state: settings.stateDir, apply: settings.apply, base_url: settings.connection.baseUrl },
      stops: { onReload: () => reloads.request("SIGHUP") },
      exec: async (io, signal) =>
        (await import("../../../commands/watch.js")).watchCommand(
          { ...settings, signal, reloads, reread: () => watchFlags(paths, raw, env) },
          io,
        ),
    };
  },
});

/**
 * What `flowrules watch` does when it runs (its flags: ../watch.ts); the loop lives in src/watch (docs/watch.md). Its
 * option parsing is this one function (watchFlags), which a reload calls again (flags, environment and the config
 * file, read anew).
 *
 * Signals (../signals.ts): SIGTERM/SIGINT stop the loop (no new request; those in flight finish; state written; lock
 * released; exit 0 within 10 s), a second one exits at once; SIGHUP reloads the rules and the config between cycles.
 */
import type { Command } from "commander";
import { z } from "zod";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { CONFIG_FILE } from "../../model/settings.js";
import type { WatchCommandOptions } from "../../commands/watch.js";
import { DEFAULT_BUDGET_PERCENT, MIN_INTERVAL_ENV, MIN_INTERVAL_MS } from "../../watch/settings.js";
import { ReloadRequests } from "../../watch/types.js";
import { CONFIG_ENV } from "../flags.js";
import { runSettings, serviceIO } from "../settings.js";
import { interruptions } from "../signals.js";
import { parseMaxDuration } from "./apply.js";

const Flags = z.object({
  apply: z.boolean().optional(),
  interval: z.string().optional(),
  budget: z.string().optional(),
  metricsPort: z.string().optional(),
  metricsHost: z.string().optional(),
});

/**
 * Flags, environment and profile → the watch settings (everything but the signal). The planning settings are those
 * of `plan` and `apply --auto-approve`, resolved by the one settings model (../settings.ts) and handed over whole.
 */
export function watchFlags(
  paths: string[],
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Omit<WatchCommandOptions, "signal" | "reloads" | "reread"> {
  const parsed = Flags.safeParse(raw);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const run = runSettings(raw, env);
  const stateDir = run.planning.state;
  if (!stateDir) throw new UserError("watch needs a state dir: pass --state DIR, set FLOWRULES_STATE or give the profile a state (it keeps the bookmarks, the lock and the journals)");
  if (run.planning.changedSince !== undefined) throw new UserError("--changed-since does not go with watch: a watcher plans every rule it loads, cycle after cycle");
  // test-only: lets tests poll faster than production ever should (docs/watch.md)
  const minRaw = env[MIN_INTERVAL_ENV];
  const minIntervalMs = minRaw !== undefined && /^\d+$/.test(minRaw) ? Number(minRaw) : MIN_INTERVAL_MS;
  let intervalMs: number | undefined;
  if (f.interval !== undefined) {
    intervalMs = parseMaxDuration(f.interval, "--interval");
    if (intervalMs < minIntervalMs) throw new UserError(`--interval must be at least ${minIntervalMs / 1000} s, got "${f.interval}"`);
  }
  let budgetPercent = DEFAULT_BUDGET_PERCENT;
  if (f.budget !== undefined) {
    const b = Number(f.budget.trim().replace(/%$/, ""));
    if (!Number.isFinite(b) || b <= 0 || b > 100) throw new UserError(`--budget must be a percentage above 0 and at most 100, got "${f.budget}"`);
    budgetPercent = b;
  }
  let metricsPort: number | undefined;
  if (f.metricsPort !== undefined) {
    if (!/^\d+$/.test(f.metricsPort.trim()) || Number(f.metricsPort) > 65535) throw new UserError(`--metrics-port must be a port number from 0 to 65535, got "${f.metricsPort}"`);
    metricsPort = Number(f.metricsPort);
  }
  const urls = run.output.notify;
  return {
    paths,
    planning: run.planning,
    ...(run.profile ? { profile: run.profile } : {}),
    stateDir,
    apply: f.apply === true,
    ...(intervalMs !== undefined ? { intervalMs } : {}),
    budgetPercent,
    ...(metricsPort !== undefined ? { metricsPort } : {}),
    metricsHost: f.metricsHost ?? "127.0.0.1",
    ...(urls.length > 0 ? { notify: { urls } } : {}),
    connection: run.connection,
    minIntervalMs,
    // watched for a change with the rules, whether it exists yet or not
    configFile: typeof raw.config === "string" ? raw.config : env[CONFIG_ENV] || CONFIG_FILE,
  };
}

export async function watch(paths: string[], raw: Record<string, unknown>, command: Command): Promise<void> {
  const settings = watchFlags(paths, raw, process.env);
  const io = serviceIO(command, settings.connection);
  const reloads = new ReloadRequests();
  const { signal, dispose } = interruptions(io, { onReload: () => reloads.request("SIGHUP") });
  try {
    process.exitCode = await runLogged(io, "watch", { paths, state: settings.stateDir, apply: settings.apply, base_url: settings.connection.baseUrl }, async (io) =>
      (await import("../../commands/watch.js")).watchCommand({ ...settings, signal, reloads, reread: () => watchFlags(paths, raw, process.env) }, io),
    );
  } finally {
    dispose();
  }
}

/**
 * `flowrules watch [paths...] --state DIR [--apply]`: wiring only (docs/watch.md). The loop, its cycles, bookmarks
 * and metrics are the watch room's (src/watch); this file hands it what lives above it — loading the rules as
 * every verb does, planning as `plan` does (planRuleSet), notifying — so a cycle runs the verbs' own code.
 */
import { resolve } from "node:path";
import type { ClientOptions } from "../api/index.js";
import type { ConnectionSettings, PlanningSettings, ProfileRef, WatchSettings } from "../model/settings.js";
import { defined } from "../model/defined.js";
import { nullLogger } from "../log/index.js";
import type { CommandIO } from "../log/command-io.js";
import { ReloadRequests, runWatcher, type Loaded } from "../watch/index.js";
import { DEFAULT_TIME_CYCLE_MS, MIN_INTERVAL_MS } from "../watch/settings.js";
import { sendNotification, type NotifySettings } from "./notify.js";
import { loadRuleSetOrReport } from "./load.js";
import { planRuleSet } from "./planning.js";

export { derivedIntervalMs } from "../watch/index.js";

/** The settings a reload reads again (flags, environment and the config file): watchFlags in src/cli/verbs/watch/run.ts. */
export interface WatchReloadable {
  planning: PlanningSettings;
  profile?: ProfileRef;
  notify?: NotifySettings;
  connection: ConnectionSettings;
}

/** The watcher's own settings (apply, interval, budget, metrics) are WatchSettings, documented in src/model/settings.ts. */
export interface WatchCommandOptions extends WatchReloadable, WatchSettings {
  paths: string[];
  stateDir: string;
  /** aborted on SIGTERM/SIGINT */
  signal: AbortSignal;
  /** SIGHUP's reload requests (src/cli/signals.ts); none in tests that do not reload */
  reloads?: ReloadRequests;
  /** reads flags, environment and the config file again, for a reload; without it a reload reads the rules only */
  reread?: () => WatchReloadable;
  /** the config file, watched with the rule paths for a change (absent files are watched for appearing) */
  configFile?: string;
  cwd?: string;
  /** the lower bound of the interval (default MIN_INTERVAL_MS; tests lower it through MIN_INTERVAL_ENV) */
  minIntervalMs?: number;
  /** rules whose meaning moves with time get a cycle at least this often (default DEFAULT_TIME_CYCLE_MS) */
  timeCycleMs?: number;
  /** the back-off's cap (default MAX_BACKOFF_MS; tests lower it through ENV.watchMaxBackoffMs, src/model/env-names.ts) */
  maxBackoffMs?: number;
  /** stop after this many cycles (tests); default: until stopped */
  maxCycles?: number;
  /** told the metrics port once it listens (tests use port 0) */
  onListening?: (port: number) => void;
  tuning?: { verifyDelayMs?: number; client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">> };
}

export async function watchCommand(opts: WatchCommandOptions, io: CommandIO): Promise<number> {
  const cwd = opts.cwd ?? process.cwd();
  const stateDir = resolve(cwd, opts.stateDir);
  const structured = (io.log ?? nullLogger).structured;
  const load = async (): Promise<Loaded | undefined> => {
    const s: WatchReloadable = opts.reread?.() ?? opts;
    const ruleSet = await loadRuleSetOrReport(opts.paths, s.planning.rules, io);
    if (!ruleSet) return undefined;
    return {
      ruleSet,
      connection: s.connection,
      planningKey: JSON.stringify({ planning: s.planning, profile: s.profile?.name ?? null }),
      ...defined({ profileName: s.profile?.name }),
      plan: (run) =>
        planRuleSet(ruleSet, run.connection, run.io, {
          // the run's planning settings as `plan` has them; --full-refresh holds for the first cycle only
          ...s.planning,
          state: stateDir,
          fullRefresh: run.first && s.planning.fullRefresh === true,
          ...defined({ profile: s.profile }),
          quiet: !structured,
          limiter: run.limiter,
          recordSeen: run.recordSeen,
          // state-cache: the apply sends through the state
          ...defined({ keepState: run.keep, onSync: run.onSync, listedChanges: run.listed }),
        }),
      notify: (payload) => sendNotification(s.notify, payload, io),
    };
  };
  return runWatcher(
    {
      watched: [...opts.paths, ...(opts.configFile ? [opts.configFile] : [])],
      stateDir,
      stateDirShown: opts.stateDir,
      doing: `watch ${opts.paths.join(" ")}`,
      apply: opts.apply,
      budgetPercent: opts.budgetPercent,
      minIntervalMs: opts.minIntervalMs ?? MIN_INTERVAL_MS,
      timeCycleMs: opts.timeCycleMs ?? DEFAULT_TIME_CYCLE_MS,
      ...defined({ intervalMs: opts.intervalMs, maxBackoffMs: opts.maxBackoffMs, maxCycles: opts.maxCycles }),
      ...(opts.metricsPort !== undefined
        ? { metrics: { port: opts.metricsPort, host: opts.metricsHost, ...defined({ onListening: opts.onListening }) } }
        : {}),
      cwd,
      ...defined({ tuning: opts.tuning }),
    },
    { io, signal: opts.signal, reloads: opts.reloads ?? new ReloadRequests(), load },
  );
}

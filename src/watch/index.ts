/**
 * `flowrules watch`'s start and stop around the loop (./loop.ts): the rules loaded (before the lock: rules that do
 * not validate exit 1 with nothing taken), the lock (a second watcher on the state dir refuses in one line), the
 * bookmarks, the one rate limiter, the metrics endpoint; and on the way out, the client closed, the server closed,
 * the lock released — on a stop as on the end of `maxCycles`.
 */
import { mkdir } from "node:fs/promises";
import { clientFrom, sharedLimiter, type ClientSettings } from "../api/index.js";
import { acquireLock, describeTakeOver, LockHeldError, type HeldLock } from "../fs/lock.js";
import { nullLogger } from "../log/index.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { metricsLine, stoppedLine } from "../render/watch/text.js";
import { readBookmarks } from "./bookmarks.js";
import { watchPaths } from "./cycles.js";
import { fingerprint } from "./fingerprint.js";
import { startMetricsServer, type MetricsServer } from "./http.js";
import { Watcher } from "./loop.js";
import { WatchMetrics } from "./metrics.js";
import type { WatcherParts, WatcherSettings } from "./types.js";

export { derivedIntervalMs } from "./settings.js";
export { ReloadRequests, type CyclePlanRun, type Loaded, type WatcherParts, type WatcherSettings } from "./types.js";

/** Runs a watcher until stopped; the exit code (1 when its rules do not load at the start). */
export async function runWatcher(settings: WatcherSettings, parts: WatcherParts): Promise<number> {
  const { io } = parts;
  const log = io.log ?? nullLogger;
  const text = (line: string): void => {
    if (!log.structured) io.stderr(`${line}\n`);
  };
  const paths = watchPaths(settings.stateDir);
  const fp = await fingerprint(settings.watched, settings.cwd);
  const loaded = await parts.load();
  if (!loaded) return EXIT_ERROR;

  await mkdir(paths.root, { recursive: true });
  const refusal = (described: string): string =>
    `another watcher uses the state dir ${settings.stateDirShown}: ${described}`;
  const lock: HeldLock = acquireLock(paths.lock, {
    applying: settings.doing,
    timeoutMs: 30 * 60_000,
    refuse: (owner, described) => new LockHeldError(refusal(described), "", owner, refusal(described)),
  });
  let server: MetricsServer | undefined;
  try {
    lock.startHeartbeat();
    if (lock.tookOver) text(`flowrules: ${describeTakeOver(paths.lock, lock.tookOver)}`);
    const bookmarks = await readBookmarks(paths.bookmarks, loaded.connection.baseUrl);
    const limiter =
      settings.tuning?.client?.limiter ?? sharedLimiter(loaded.connection, settings.tuning?.client?.rateLimitWindowMs);
    const metrics = new WatchMetrics(settings.minIntervalMs, Date.now());
    const connection: ClientSettings = {
      ...loaded.connection,
      observe: (e) => metrics.clientEvent(e),
      stop: parts.signal,
    };
    const client = clientFrom(connection, { ...settings.tuning?.client, limiter });
    const watcher = new Watcher(settings, parts, {
      loaded,
      fingerprint: fp,
      bookmarks,
      client,
      connection,
      limiter,
      lock,
      metrics,
      paths,
    });
    try {
      if (settings.metrics) {
        server = await startMetricsServer(metrics, settings.metrics.host, settings.metrics.port);
        settings.metrics.onListening?.(server.port);
        text(metricsLine(settings.metrics.host, server.port));
      }
      log.event("watch.started", {
        state: settings.stateDirShown,
        apply: settings.apply,
        rules: loaded.ruleSet.rules.length,
        digest: loaded.ruleSet.digest,
        base_url: client.baseUrl,
        ...(server ? { metrics_port: server.port } : {}),
      });
      await watcher.runUntilStopped();
    } finally {
      await client.close();
    }
    log.event("watch.stopped", { cycles: watcher.cycles });
    text(stoppedLine(watcher.cycles, settings.stateDirShown));
    return EXIT_OK;
  } finally {
    await server?.close();
    lock.release();
  }
}

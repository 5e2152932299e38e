/**
 * Planning as `plan`, `apply <paths> --auto-approve` and `watch` share it: each hands over the run's
 * PlanningSettings whole (src/model/settings.ts), so a planning flag cannot reach one verb and miss another
 * (test/cli/settings.test.ts checks every one).
 */
import { clientFrom, type ClientSettings, type RequestLimiter } from "../api/index.js";
import { defined } from "../model/defined.js";
import type { ConnectionSettings, PlanningSettings, ProfileRef } from "../model/settings.js";
import { sendRatePerMin, serviceName } from "../model/settings.js";
import { plural } from "../text/plural.js";
import type { Plan } from "../plan/types.js";
import { runPlan, type PlanProgress, type RequestChoice, type RunPlanOptions } from "../engine/plan-live.js";
import type { RuleSet } from "../rules/types.js";
import { DEFAULT_RULE_PATHS } from "../rules/index.js";
import { rulesChangedSince, type ChangedSince } from "../ci/changed-since.js";
import { changedRuleSet, withChangedSince } from "../ci/changed-plan.js";
import { shardLabel } from "../plan/shard.js";
import { progressView } from "../render/progress/index.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { logPlan } from "../render/events/plan.js";
import { loadRuleSetOrReport } from "./load.js";
import { readCatalog } from "../rules/catalog.js";
import { CATALOG_FILE } from "../model/defaults.js";
import type { CommandIO } from "../log/command-io.js";
import { textSafe } from "../render/escape.js";
import { EXIT_OK, UserError } from "../model/errors.js";
import { durationText } from "../text/duration.js";
import { HeldMemo, syncLine, syncLeftMs, type ListedChanges, type SyncProgress } from "../state/index.js";
import { partialPlan } from "./partial-plan.js";
import { duration } from "../render/progress/format.js";
import { maskKeyInPlan } from "../engine/mask-plan.js";
import { partialLine } from "../render/plan/summary.js";
import { finishState, holdState, openStateForRun, reportState, stateSettingsOf, type HeldState } from "./state.js";

/** One planning run: the planning settings (all optional here, as library callers and tests give only some). */
export type PlanRunOptions = Partial<PlanningSettings> & {
  quiet: boolean;
  now?: Date;
  /**
   * a forecast (`plan --at`, docs/forecast.md): the plan as it would be at this instant if nobody changed anything;
   * every time-relative part resolves at it (the run's one `now`), the data is read now, and the plan carries
   * `forecast_at`. A forecast neither reads nor writes a state dir: the state is the service's data as of a run, and
   * a run dated in the future would move its bookmarks and time slices past what was read.
   */
  at?: Date;
  /** a forecast's planning run (`forecast`, `plan --compare --forecast`): warned about what it cannot move, as `at` */
  forecasting?: boolean;
  /** the profile of the run, named beside the service in the plan and on stderr */
  profile?: ProfileRef;
  /** the process's one rate budget, when planning is one phase of a run (apply --auto-approve, watch) */
  limiter?: RequestLimiter;
  /** the plan will be applied: record what it saw of each instance it changes (src/engine/seen.ts) */
  recordSeen?: boolean;
  /**
   * with a state dir: it is handed over open after planning instead of written, for the apply that follows to send
   * through it and then write it (HeldState.finish); the caller must release it
   */
  keepState?: (held: HeldState) => void;
  /** the run's stop (src/cli/signals.ts): no request starts after it, and a plan cut short is no plan */
  signal?: AbortSignal;
  /**
   * `plan --max-duration`: no request starts after this long; a plan not finished by then is no plan, and with a
   * state the sync so far is kept for the next run (docs/operating.md, "A first sync over several runs"). Its own
   * name: apply's --max-duration (ApplyingSettings) bounds when changes start, not planning
   */
  planMaxDurationMs?: number;
  /** after each checkpoint of a sync: how far it got (a watcher's metrics) */
  onSync?: (p: { synced: number; total: number | null; leftS: number | null }) => void;
  /** with a state dir: changes listings a watcher's poll asked just before this run (src/state/known.ts) */
  listedChanges?: ListedChanges;
};

/** A plan not made because --max-duration ran out first; with a state, the sync so far is kept. Not an error. */
export class PlanNotFinished extends UserError {}

/** One request choice of the query planner as a line for people. */
function explainLine(c: RequestChoice): string {
  const n = plural(c.requests, "request");
  const who = c.rules && c.rules.length > 0 ? ` [${c.rules.join(", ")}]` : "";
  return `requests: workflow ${c.workflow_id}, ${c.subject}: ${c.choice}, ${n}: ${c.why}${who}\n`;
}

/** The plan with its profile named right after base_url (absent without a profile, so such plans are unchanged). */
export function withProfile<P extends Plan>(plan: P, profile: ProfileRef | undefined): P {
  if (!profile) return plan;
  const { format_version, flowrules_version, created_at, base_url, ...rest } = plan;
  return { format_version, flowrules_version, created_at, base_url, profile: profile.name, ...rest } as P;
}

/** A plan made for `at` from data read at `readAt`: created_at is when it was made, forecast_at the instant it shows. */
export function asForecast<P extends Plan>(plan: P, at: Date, readAt: Date): P {
  const { format_version, flowrules_version, created_at: _planned, ...rest } = plan;
  return {
    format_version,
    flowrules_version,
    created_at: readAt.toISOString(),
    forecast_at: at.toISOString(),
    ...rest,
  } as P;
}

/** Plans an already loaded rule set against the service; shared by `plan` and `apply --auto-approve`. */
export async function planRuleSet(
  ruleSet: RuleSet,
  /** the connection, with what the run adds (a watcher's metrics sink, the run's stop) */
  connection: ClientSettings,
  io: CommandIO,
  opts: PlanRunOptions,
  // `plan --compare` plans both versions of the touched rules through the same client, progress and logging
  run: (o: RunPlanOptions) => Promise<Plan> = runPlan,
): Promise<Plan> {
  // checked before a client exists: a misused --resync-after is one line with nothing to close
  const stateSettings = opts.at ? undefined : stateSettingsOf(opts);
  if (opts.at && opts.state !== undefined && !opts.quiet)
    io.stderr("note: a forecast neither reads nor writes the state dir; it reads the service\n");
  const stopped = opts.signal ?? connection.stop;
  const deadline = opts.planMaxDurationMs === undefined ? undefined : new AbortController();
  const deadlineTimer = deadline
    ? setTimeout(() => deadline.abort(), Math.min(opts.planMaxDurationMs ?? 0, 2 ** 31 - 1))
    : undefined;
  deadlineTimer?.unref();
  const stop = deadline ? (stopped ? AbortSignal.any([stopped, deadline.signal]) : deadline.signal) : stopped;
  // progress per rule (requests done of expected, ETA at the pace the limiter really allows)
  const view = progressView(io, {
    quiet: opts.quiet,
    ratePerMin: sendRatePerMin(connection.rateLimitPerMin),
    rules: ruleSet.rules.length,
  });
  const logClientEvent = clientEventLogger(io.log ?? nullLogger);
  const client = clientFrom(connection, {
    onEvent: (e) => {
      logClientEvent(e);
      view.clientEvent(e);
    },
    ...defined({ limiter: opts.limiter, signal: stop }),
  });
  const log = io.log ?? nullLogger;
  const onWarning = (message: string): void => {
    // once the service refused the key or cannot be reached, the one error at the end says so
    if (client.unusable()) return;
    log.event("structure.warning", { message }, "warn");
    if (!log.structured) io.stderr(`warning: ${textSafe(message)}\n`);
  };
  // the service judges run times by its own clock: a forecast cannot move them (docs/forecast.md)
  if (opts.at || opts.forecasting) {
    for (const r of ruleSet.rules) {
      if (r.select.total_runtime_min !== undefined || r.select.total_runtime_max !== undefined)
        onWarning(
          `rule "${r.name}": total_runtime filters are judged by the service's clock, so the forecast counts them as of now`,
        );
    }
  }
  const catalog = await readCatalog(opts.workflows ?? CATALOG_FILE, {
    required: opts.workflows !== undefined,
    baseUrl: client.baseUrl,
  });
  catalog.warnings.forEach(onWarning);
  // why each request is made: always in the JSON log, on stderr with --explain-requests
  const onRequestChoice = (c: RequestChoice): void => {
    log.event("plan.requests", { ...c }, "debug");
    if (opts.explainRequests && !log.structured) io.stderr(explainLine(c));
  };
  // the state dir is opened (and locked) before any request: an unusable one fails here, in one line
  const now = opts.at ?? opts.now ?? (stateSettings ? new Date() : undefined);
  const readAt = new Date();
  const ratePerMin = sendRatePerMin(connection.rateLimitPerMin);
  /** the run was stopped: the last checkpoint's figures go into the one line that says so */
  let stopping = false;
  let lastSyncLine = 0;
  const saySync = (p: SyncProgress, print: boolean): string => {
    const line = syncLine(p, ratePerMin, duration);
    log.event(
      "state.sync",
      { synced: p.synced, total: p.total, workflows: p.workflows, left_s: leftSeconds(p, ratePerMin) },
      "info",
    );
    opts.onSync?.({ synced: p.synced, total: p.total, leftS: leftSeconds(p, ratePerMin) });
    // on a text stderr at most once a minute (a checkpoint may come every few seconds at an unlimited rate)
    if (print && !opts.quiet && !log.structured && Date.now() - lastSyncLine >= 60_000) {
      lastSyncLine = Date.now();
      view.clear();
      io.stderr(`state: ${line}\n`);
    }
    return line;
  };
  const state = stateSettings
    ? await openStateForRun(
        stateSettings,
        client,
        connection.apiKey,
        ruleSet,
        now ?? new Date(),
        onWarning,
        onRequestChoice,
        (p) => saySync(p, !stopping),
        opts.listedChanges,
      ).catch(async (err: unknown) => {
        clearTimeout(deadlineTimer);
        await client.close();
        throw err;
      })
    : undefined;
  if (state?.partial) {
    const p = state.partial;
    const has = `holds a partial sync (${syncLine(p, 0, duration)} of ${plural(p.workflows, "workflow")})`;
    log.event("state.partial", { dir: state.dir, synced: p.synced, total: p.total, workflows: p.workflows }, "info");
    if (!opts.quiet && !log.structured)
      io.stderr(`state: ${textSafe(state.dir)} ${has}: this run reads the rest before it plans\n`);
  }
  // --partial: what the live run answered that the state does not keep, for the rules a deadline cuts
  const memo = state && opts.partial && deadline ? new HeldMemo(state.wrap(client)) : undefined;
  const api = memo ?? (state ? state.wrap(client) : client);
  let kept = false;
  const started = Date.now();
  try {
    const onProgress = (p: PlanProgress): void => {
      if (log.structured) log.event("rule.progress", { rule: p.rule, done: p.done, total: p.total }, "debug");
      view.plan(p);
    };
    const plan = await run({
      client: api,
      ruleSet,
      ...(now ? { now } : {}),
      onProgress,
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(opts.optOutTag ? { optOutTag: opts.optOutTag } : {}),
      onRequestChoice,
      ...(catalog.catalog ? { catalog: catalog.catalog.workflows } : {}),
      onWarning,
      ...(opts.recordSeen ? { recordSeen: true } : {}),
    });
    view.finish();
    // the rules whose requests were refused by the stop have errors, not results: no part of it is a plan
    if (stop?.aborted && plan.errors.length > 0) {
      // what was read is kept for the next run when a sync was going on (a checkpoint)
      stopping = true;
      const synced = state ? await state.checkpoint() : undefined;
      const earlier = state?.partial;
      const kept = synced
        ? `the state keeps what was read (${saySync(synced, false)}): the same command again continues`
        : earlier
          ? `the state keeps the sync so far (${syncLine(earlier, 0, duration)}): the same command again continues`
          : "the state is as before";
      if (deadline?.signal.aborted && !stopped?.aborted && opts.partial) {
        // --partial: the rules that finished are the plan, marked partial; the sync stays at its checkpoint
        const cut = plan.errors.filter((e) => e.code === "api" && e.rule !== undefined).map((e) => e.rule ?? "");
        // the cut rules planned from what the state's checkpoint holds, where that is sound (./partial-plan.ts)
        const partial = await partialPlan({
          plan,
          sync: synced ?? earlier,
          cut,
          ruleSet,
          state,
          memo,
          live: client,
          now,
          run: {
            ...(opts.optOutTag ? { optOutTag: opts.optOutTag } : {}),
            ...(opts.shard ? { shard: opts.shard } : {}),
            ...(catalog.catalog ? { catalog: catalog.catalog.workflows } : {}),
          },
        });
        maskKeyInPlan(partial, connection.apiKey);
        const line = partialLine(partial) ?? "";
        log.event(
          "plan.partial",
          {
            synced: partial.partial?.synced ?? null,
            total: partial.partial?.total ?? null,
            rules_cut: partial.partial?.rules_cut ?? cut,
            rules_partial: (partial.partial?.rules_partial ?? []).map((r) => r.rule),
          },
          "warn",
        );
        if (!opts.quiet && !log.structured)
          io.stderr(
            `--max-duration ${durationText(opts.planMaxDurationMs ?? 0)} ran out before the sync was complete: a partial plan (apply refuses it); ${kept}\n${line}\n`,
          );
        return withProfile(partial, opts.profile);
      }
      if (deadline?.signal.aborted && !stopped?.aborted) {
        throw new PlanNotFinished(
          `--max-duration ${durationText(opts.planMaxDurationMs ?? 0)} ran out before the plan was complete: no plan was made; ${kept}`,
          EXIT_OK,
        );
      }
      throw new UserError(`stopped before the plan was complete: no plan was made; ${kept}`);
    }
    const unusable = client.unusable();
    if (unusable) throw new UserError(`${unusable.message}; nothing was planned`);
    // the sync, if one went on, is complete: the watcher's gauges go back to none
    if (state) opts.onSync?.({ synced: 0, total: null, leftS: null });
    maskKeyInPlan(plan, connection.apiKey);
    const ms = Date.now() - started;
    logPlan(log, plan, {
      duration_ms: ms,
      requests: client.stats().total,
      ...defined({ shard: opts.shard && shardLabel(opts.shard), profile: opts.profile?.name }),
    });
    if (!opts.quiet && !log.structured) {
      const s = (ms / 1000).toFixed(1);
      io.stderr(
        `${plural(client.stats().total, "request")} to ${serviceName(client.baseUrl, opts.profile?.name)} in ${s} s\n`,
      );
    }
    if (state && opts.keepState) {
      opts.keepState(holdState(state, reportState(state, plan, io, opts.quiet), io));
      kept = true;
    } else if (state) await finishState(state, plan, io, opts.quiet);
    return withProfile(opts.at ? asForecast(plan, opts.at, readAt) : plan, opts.profile);
  } finally {
    clearTimeout(deadlineTimer);
    view.finish();
    if (!kept) await state?.release();
    await client.close();
  }
}

/** The rules a run plans: loaded (narrowed by --rule), and by --changed-since when given. */
export interface LoadedRules {
  ruleSet: RuleSet;
  changed?: ChangedSince;
}

/** Loads the rules of `paths` as the planning settings ask; undefined (diagnostics printed) when they do not load. */
export async function loadPlanning(
  paths: string[],
  planning: PlanRunOptions,
  io: CommandIO,
): Promise<LoadedRules | undefined> {
  const ruleSet = await loadRuleSetOrReport(paths, planning.rules ?? [], io);
  if (!ruleSet) return undefined;
  if (!planning.changedSince) return { ruleSet };
  const changed = await rulesChangedSince(planning.changedSince, paths.length > 0 ? paths : DEFAULT_RULE_PATHS);
  for (const w of changed.warnings) {
    io.log?.event("rules.changed_warning", { message: w }, "warn");
    if (!io.log?.structured) io.stderr(`warning: ${textSafe(w)}\n`);
  }
  const { ref, commit, added, changed: edited, unchanged, removed } = changed;
  io.log?.event("rules.changed", {
    ref,
    commit,
    added,
    changed: edited,
    unchanged: unchanged.length,
    removed: removed.map((r) => r.name),
  });
  return { ruleSet, changed };
}

/** Plans loaded rules with the run's settings: the one planning step of `plan` and `apply --auto-approve`. */
export async function planLoaded(
  loaded: LoadedRules,
  connection: ConnectionSettings,
  io: CommandIO,
  planning: PlanRunOptions,
): Promise<Plan> {
  const { ruleSet, changed } = loaded;
  const planned = await planRuleSet(changed ? changedRuleSet(ruleSet, changed) : ruleSet, connection, io, planning);
  return changed ? withChangedSince(planned, changed, planning.rules ?? []) : planned;
}

function leftSeconds(p: SyncProgress, ratePerMin: number): number | null {
  const ms = syncLeftMs(p, ratePerMin);
  return ms === undefined ? null : Math.round(ms / 1000);
}

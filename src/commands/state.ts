/** `--state DIR` for plan and apply: opening the state room for a run and closing it (src/state/README.md). */
import type { ApiClient } from "../api/index.js";
import type { RequestChoice } from "../engine/plan-live.js";
import { VERSION } from "../model/version.js";
import type { Plan } from "../plan/types.js";
import type { RuleSet } from "../rules/types.js";
import type { CommandIO } from "../log/command-io.js";
import {
  DEFAULT_RESYNC_AFTER_MS,
  openRunState,
  readInFull,
  StateNotWritten,
  type OwnWrite,
  type RunState,
  type ListedChanges,
  type StateSettings,
  type SyncProgress,
} from "../state/index.js";
import { textSafe } from "../render/escape.js";
import type { PlanningSettings } from "../model/settings.js";
import { UserError } from "../model/errors.js";
import { ENV } from "../model/env-names.js";

/** The state settings of a run's planning settings, or undefined without --state (its variable, a profile's state). */
export function stateSettingsOf(p: Partial<PlanningSettings>): StateSettings | undefined {
  if (p.state === undefined || p.state.trim() === "") {
    if (p.resyncAfterMs !== undefined || p.fullRefresh === true)
      throw new UserError(`--resync-after and --full-refresh need --state DIR (or ${ENV.state})`);
    return undefined;
  }
  return {
    dir: p.state,
    resyncAfterMs: p.resyncAfterMs ?? DEFAULT_RESYNC_AFTER_MS,
    fullRefresh: p.fullRefresh === true,
  };
}

export function openStateForRun(
  settings: StateSettings,
  client: ApiClient,
  apiKey: string,
  ruleSet: RuleSet,
  now: Date,
  warn: (message: string) => void,
  explain: (c: RequestChoice) => void,
  onCheckpoint?: (p: SyncProgress) => void,
  listed?: ListedChanges,
): Promise<RunState> {
  return openRunState(settings, {
    baseUrl: client.baseUrl,
    apiKey,
    now,
    rules: ruleSet.rules,
    version: VERSION,
    warn,
    explain,
    ...(onCheckpoint ? { onCheckpoint } : {}),
    ...(listed ? { listed } : {}),
  });
}

/**
 * A state kept open after planning, so that the apply that follows sends through it (`apply --auto-approve --state`,
 * `apply plan.json --state`, `watch --apply`): the answers of our writes are written through, and the state is
 * written once, after the apply.
 */
export interface HeldState {
  /** the client to apply through: every call reaches the service; our writes' answers are kept */
  applying(client: ApiClient): ApiClient;
  /** our writes so far */
  written(): readonly OwnWrite[];
  /** writes the state (when the plan read all it needed) and releases it; a failed write is one warning */
  finish(): Promise<void>;
  /** releases it without writing (idempotent) */
  release(): Promise<void>;
  /** after finish(): per workflow, from when the next run lists changes (a watcher's poll asks that listing) */
  changesFrom(): ReadonlyMap<number, string>;
}

export function holdState(state: RunState, complete: boolean, io: CommandIO): HeldState {
  return {
    applying: (client) => state.applying(client),
    written: () => state.written(),
    changesFrom: () => state.changesFrom(),
    async finish() {
      try {
        if (complete) await commitState(state, io);
      } finally {
        await state.release();
      }
    },
    release: () => state.release(),
  };
}

/**
 * Writes the state. One that cannot be written (disk full, file-size limit, I/O error) leaves the previous one byte
 * for byte and is one warning line naming the file: the plan itself is whole and right, so the run keeps its exit
 * code (docs/operating.md, "State between runs").
 */
async function commitState(state: RunState, io: CommandIO): Promise<StateNotWritten | undefined> {
  try {
    await state.commit();
    return undefined;
  } catch (err) {
    if (!(err instanceof StateNotWritten)) throw err;
    if (!err.told) {
      io.log?.event("state.not_written", { dir: state.dir, not_written: err.message }, "warn");
      if (!io.log?.structured) io.stderr(`warning: state: ${textSafe(err.message)}\n`);
    }
    return err;
  }
}

/** Says what came from the state (stderr line, `state.used` event) before it is written, after the apply. */
function sayState(state: RunState, io: CommandIO, quiet: boolean, complete: boolean): void {
  const counts = state.counts();
  const fields = {
    dir: state.dir,
    from_state: counts?.fromState ?? 0,
    read_again: counts?.readAgain ?? 0,
    written: complete,
  };
  io.log?.event("state.used", fields);
  sayCounts(fields, complete, undefined, io, quiet);
}

/** Says what came from the state when it is held for an apply (it is written after); whether the plan read all it needed. */
export function reportState(state: RunState, plan: Plan, io: CommandIO, quiet: boolean): boolean {
  state.explainAnswers();
  const complete = readInFull(plan);
  sayState(state, io, quiet, complete);
  return complete;
}

/**
 * Writes the new state after a run that read all it needed, and says what came from it. A state that cannot be
 * written (disk full, file-size limit, I/O error) leaves the previous one byte for byte and is one warning line
 * naming the file: the plan itself is whole and right, so the run keeps its exit code (docs/operating.md, "State
 * between runs").
 */
export async function finishState(state: RunState, plan: Plan, io: CommandIO, quiet: boolean): Promise<void> {
  state.explainAnswers();
  const counts = state.counts();
  const complete = readInFull(plan);
  let notWritten: StateNotWritten | undefined;
  if (complete) {
    try {
      await state.commit();
    } catch (err) {
      if (!(err instanceof StateNotWritten)) throw err;
      notWritten = err;
    }
  }
  const fields = {
    dir: state.dir,
    from_state: counts?.fromState ?? 0,
    read_again: counts?.readAgain ?? 0,
    written: complete && !notWritten,
    ...(notWritten ? { not_written: notWritten.message } : {}),
  };
  io.log?.event("state.used", fields, notWritten && !notWritten.told ? "warn" : "info");
  if (notWritten && !notWritten.told && !io.log?.structured)
    io.stderr(`warning: state: ${textSafe(notWritten.message)}\n`);
  sayCounts(fields, complete, notWritten, io, quiet);
}

function sayCounts(
  fields: { from_state: number; read_again: number },
  complete: boolean,
  notWritten: StateNotWritten | undefined,
  io: CommandIO,
  quiet: boolean,
): void {
  if (!quiet && !io.log?.structured) {
    const n = (x: number): string => x.toLocaleString("en-US");
    io.stderr(
      `state: ${n(fields.from_state)} instances from the state, ${n(fields.read_again)} read again${complete ? (notWritten ? "; not written" : "") : "; not written (the run failed to read part of the data)"}\n`,
    );
  }
}

/**
 * `apply plan.json --state DIR`: the state dir opened (locked) for the apply alone. Nothing is planned; the previous
 * state is carried forward with the answers of the writes, so the next run with it reads none of them again.
 */
export async function openStateForApply(
  settings: StateSettings,
  baseUrl: string,
  apiKey: string,
  io: CommandIO,
): Promise<HeldState> {
  const state = await openRunState(settings, {
    baseUrl,
    apiKey,
    now: new Date(),
    rules: [],
    version: VERSION,
    warn: (m) => io.stderr(`warning: ${textSafe(m)}\n`),
  });
  return holdState(state, true, io);
}

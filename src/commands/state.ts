/** `--state DIR` for plan and apply: opening the state room for a run and closing it (src/state/README.md). */
import type { ApiClient } from "../api/index.js";
import type { RequestChoice } from "../engine/plan-live.js";
import { VERSION } from "../model/version.js";
import type { Plan } from "../plan/types.js";
import type { RuleSet } from "../rules/types.js";
import type { CommandIO } from "../log/command-io.js";
import { DEFAULT_RESYNC_AFTER_MS, openRunState, readInFull, StateNotWritten, type RunState, type StateSettings } from "../state/index.js";
import { textSafe } from "../render/escape.js";
import type { PlanningSettings } from "../model/settings.js";
import { UserError } from "../model/errors.js";

/** The state settings of a run's planning settings, or undefined without --state (FLOWRULES_STATE, a profile's state). */
export function stateSettingsOf(p: Partial<PlanningSettings>): StateSettings | undefined {
  if (p.state === undefined || p.state.trim() === "") {
    if (p.resyncAfterMs !== undefined || p.fullRefresh === true) throw new UserError("--resync-after and --full-refresh need --state DIR (or FLOWRULES_STATE)");
    return undefined;
  }
  return { dir: p.state, resyncAfterMs: p.resyncAfterMs ?? DEFAULT_RESYNC_AFTER_MS, fullRefresh: p.fullRefresh === true };
}


export function openStateForRun(
  settings: StateSettings,
  client: ApiClient,
  apiKey: string,
  ruleSet: RuleSet,
  now: Date,
  warn: (message: string) => void,
  explain: (c: RequestChoice) => void,
): Promise<RunState> {
  return openRunState(settings, { baseUrl: client.baseUrl, apiKey, now, rules: ruleSet.rules, version: VERSION, warn, explain });
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
  const fields = { dir: state.dir, from_state: counts?.fromState ?? 0, read_again: counts?.readAgain ?? 0, written: complete && !notWritten, ...(notWritten ? { not_written: notWritten.message } : {}) };
  io.log?.event("state.used", fields, notWritten && !notWritten.told ? "warn" : "info");
  if (notWritten && !notWritten.told && !io.log?.structured) io.stderr(`warning: state: ${textSafe(notWritten.message)}\n`);
  if (!quiet && !io.log?.structured) {
    const n = (x: number): string => x.toLocaleString("en-US");
    io.stderr(`state: ${n(fields.from_state)} instances from the state, ${n(fields.read_again)} read again${complete ? (notWritten ? "; not written" : "") : "; not written (the run failed to read part of the data)"}\n`);
  }
}

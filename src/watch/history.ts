/**
 * `flowrules history`: what a watcher's last cycles did, read from their folders (./cycles.ts) — the plan says which
 * changes a cycle had, its journal what became of each (src/apply/journal.ts). Nothing is asked of the service.
 */
import { basename, dirname } from "node:path";
import { journalEvents, lastRunFinished, type JournalEvent } from "../apply/journal.js";
import { UserError } from "../model/errors.js";
import { loadPlanFile } from "../plan/read.js";
import type { HistoryChangeEntry, HistoryCycleEntry, HistoryDocument } from "../render/history/types.js";
import { cycleFolders, planProblem, watchPaths } from "./cycles.js";

/** Per change id: the latest word of its journal lines, over every run of the plan. */
function outcomes(events: readonly JournalEvent[], finished: boolean): (id: string) => Pick<HistoryChangeEntry, "at" | "outcome" | "reason"> {
  const last = new Map<string, Extract<JournalEvent, { change: string }>>();
  for (const e of events) {
    if (!("change" in e)) continue;
    // a done line is final: a later run only repeats what it knew
    if (last.get(e.change)?.event === "done") continue;
    last.set(e.change, e);
  }
  return (id) => {
    const e = last.get(id);
    if (e === undefined) return { at: null, outcome: finished ? "not_sent" : "not_started" };
    switch (e.event) {
      case "done":
        return { at: e.at, outcome: "applied", ...(e.how === "verified" ? { reason: "confirmed by reading after an unknown outcome" } : {}) };
      case "intent":
        // no outcome after it: a stop refused to send it (finished), or the watcher died around it
        return finished ? { at: null, outcome: "not_sent" } : { at: e.at, outcome: "in_flight" };
      case "stale":
        return { at: e.at, outcome: "stale", reason: e.reason };
      case "failed":
        return { at: e.at, outcome: "failed", reason: e.reason };
      case "not_acted":
        return { at: e.at, outcome: "not_acted", reason: e.reason };
    }
  };
}

async function cycleEntry(planFile: string, journalFile: string): Promise<HistoryCycleEntry> {
  const events = journalEvents(journalFile);
  const finished = lastRunFinished(events);
  const outcomeOf = outcomes(events, finished);
  const { plan } = await loadPlanFile(planFile, "", undefined, { toShow: true });
  const changes = plan.changes
    .filter((c) => c.audit !== true)
    .map((c): HistoryChangeEntry => {
      const { at, outcome, reason } = outcomeOf(c.id);
      return {
        at,
        rule: c.rule,
        instance_id: c.instance_id,
        ...(c.instance_name ? { instance_name: c.instance_name } : {}),
        kind: c.kind,
        ...(c.step_id !== undefined ? { step_id: c.step_id } : {}),
        outcome,
        ...(reason !== undefined ? { reason } : {}),
      };
    });
  const start = events.find((e) => e.event === "start");
  return { folder: basename(dirname(planFile)), started_at: start?.at ?? null, finished, changes };
}

/**
 * The last `last` cycles that applied something, oldest first. A cycle whose plan cannot be read (a crash truncated
 * it; the next watcher sets it aside) is left out, said in one line through `warn`: the others are still shown.
 */
export async function readHistory(stateDir: string, stateDirShown: string, last: number, warn: (line: string) => void = () => undefined): Promise<HistoryDocument> {
  const folders = (await cycleFolders(watchPaths(stateDir).cycles)).slice(-last);
  const cycles: HistoryCycleEntry[] = [];
  for (const f of folders) {
    try {
      cycles.push(await cycleEntry(f.planFile, f.journalFile));
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      warn(`cycle ${f.name} left out: ${planProblem(err.message)}`);
    }
  }
  return { format_version: 1, command: "history", state_dir: stateDirShown, cycles };
}

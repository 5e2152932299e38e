/**
 * `flowrules history`: what a watcher's last cycles did, read from their folders (./cycles.ts) — the plan says which
 * changes a cycle had, its journal what became of each (src/apply/journal.ts). Nothing is asked of the service.
 */
import { basename, dirname } from "node:path";
import { journalEvents, lastRunFinished, type JournalEvent } from "../apply/journal.js";
import { UserError } from "../model/errors.js";
import { loadPlanFile } from "../plan/read.js";
import type { HistoryChangeEntry, HistoryCycleEntry, HistoryDocument } from "../render/history/types.js";
import { readCycleLog, type CycleLogLine } from "./cycle-log.js";
import { cycleFolders, planProblem, watchPaths } from "./cycles.js";

/** Per change id: the latest word of its journal lines, over every run of the plan. */
function outcomes(
  events: readonly JournalEvent[],
  finished: boolean,
): (id: string) => Pick<HistoryChangeEntry, "at" | "outcome" | "reason"> {
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
        return {
          at: e.at,
          outcome: "applied",
          ...(e.how === "verified" ? { reason: "confirmed by reading after an unknown outcome" } : {}),
        };
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

/** --rule and --instance: only the cycles that concern it, their changes narrowed to it. */
export interface HistoryFilter {
  rule?: string;
  instance?: number;
}

function narrowed(c: HistoryCycleEntry, f: HistoryFilter): HistoryCycleEntry | undefined {
  if (f.rule === undefined && f.instance === undefined) return c;
  const changes = c.changes.filter(
    (ch) => (f.rule === undefined || ch.rule === f.rule) && (f.instance === undefined || ch.instance_id === f.instance),
  );
  const heldIt = f.rule !== undefined && f.instance === undefined && (c.held?.includes(f.rule) ?? false);
  const named = (c.errors ?? []).some(
    (e) =>
      (f.rule === undefined || e.includes(`"${f.rule}"`)) &&
      (f.instance === undefined || new RegExp(`\\binstance ${f.instance}\\b`).test(e)),
  );
  if (changes.length === 0 && !heldIt && !named) return undefined;
  return { ...c, changes };
}

/**
 * The last `last` cycles, oldest first: those with a folder (they applied something: their changes from the plan and
 * the journal) and those the cycle log records without one (failed, held rules back), merged in time order. A cycle
 * whose plan cannot be read (a crash truncated it; the next watcher sets it aside) is left out, said in one line
 * through `warn`: the others are still shown.
 */
export async function readHistory(
  stateDir: string,
  stateDirShown: string,
  last: number,
  warn: (line: string) => void = () => undefined,
  filter: HistoryFilter = {},
): Promise<HistoryDocument> {
  const paths = watchPaths(stateDir);
  const logged = await readCycleLog(paths.log);
  const byFolder = new Map(logged.flatMap((l) => (l.folder ? [[l.folder, l] as const] : [])));
  const entries: Array<{ key: string; entry: HistoryCycleEntry }> = [];
  const fromLog = (l: CycleLogLine): Partial<HistoryCycleEntry> => ({
    cycle: l.cycle,
    kind: l.kind,
    result: l.result,
    held: l.held,
    errors: l.errors,
  });
  for (const f of await cycleFolders(paths.cycles)) {
    try {
      const entry = await cycleEntry(f.planFile, f.journalFile);
      const l = byFolder.get(f.name);
      entries.push({
        key: l?.at ?? entry.started_at ?? f.name,
        entry: l ? { ...entry, started_at: l.at, ...fromLog(l) } : entry,
      });
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      warn(`cycle ${f.name} left out: ${planProblem(err.message)}`);
    }
  }
  // a cycle with no folder is listed when it was not simply fine: it failed or held rules back
  for (const l of logged) {
    if (l.folder !== null || l.result === "ok") continue;
    entries.push({ key: l.at, entry: { folder: null, started_at: l.at, finished: true, changes: [], ...fromLog(l) } });
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const cycles = entries.flatMap(({ entry }) => narrowed(entry, filter) ?? []).slice(-last);
  return { format_version: 1, command: "history", state_dir: stateDirShown, cycles };
}

/**
 * What a run with state says of itself while it reads: how far a sync got (progress lines, checkpoints, metrics) and,
 * for `--explain-requests`, what the state answered. Functions of the run (./run.ts), called by StateClient.
 */
import { plural } from "../text/plural.js";
import type { StateRun } from "./run.js";
import type { SyncProgress } from "./sync.js";

/**
 * Per workflow, what the state answered of the record reads and field values the planner asked for, in the
 * `--explain-requests` shape: the planner's own lines count what it asked for, these what reached the service.
 */
export function explainAnswers(this: StateRun): void {
  const explain = this.opts.explain;
  if (!explain) return;
  for (const w of this.workflows.values()) {
    const t = w.tally;
    if (t.recordsKept + t.recordsRead + t.valuesKept + t.valuesAsked + t.written === 0) continue;
    const through =
      t.written > 0
        ? `; ${plural(t.written, "record")} of our own writes used (${plural(t.windows, "listing")} showed them unchanged since)`
        : "";
    explain({
      subject: "records and field values",
      workflow_id: w.pid,
      choice: "state",
      requests: t.recordsRead + t.fieldPages + t.windows,
      why: `${plural(t.recordsKept, "record read")} and ${plural(t.valuesKept, "field value")} answered from the state; ${plural(t.recordsRead, "record")} read and ${plural(t.valuesAsked, "field value")} asked (${plural(t.fieldPages, "field page")})${t.valuesByRecords > 0 ? `; ${plural(t.valuesByRecords, "field value")} of changed instances taken from their records read with values` : ""}${through}`,
    });
  }
}

/** Whether a workflow is being read in full (a first sync, or the rest of one): checkpoints are written then. */
export function syncing(this: StateRun): boolean {
  for (const w of this.workflows.values()) if (w.cold || w.partial) return true;
  return false;
}

/** How far the sync of the workflows being read in full got. */
export function progress(this: StateRun): SyncProgress {
  let synced = 0;
  let total: number | null = null;
  let workflows = 0;
  const perWorkflow: NonNullable<SyncProgress["perWorkflow"]> = [];
  for (const [id, w] of this.workflows) {
    if (!w.cold && !w.partial) continue;
    workflows++;
    synced += w.synced;
    perWorkflow.push({
      workflow_id: id,
      synced: w.synced,
      total: w.total === null ? null : Math.max(w.total, w.synced),
    });
    if (w.total !== null) total = (total ?? 0) + Math.max(w.total, w.synced);
  }
  let readThisRun = 0;
  for (const w of this.workflows.values()) readThisRun += w.tally.recordsRead;
  return { workflows, synced, total, requests: this.service.stats?.().total ?? 0, readThisRun, perWorkflow };
}

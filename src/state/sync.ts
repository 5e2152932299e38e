/**
 * A first sync that survives job limits and kills (docs/operating.md, "A first sync over several runs"): while a run
 * reads a workflow it has no complete state of, the state is written in checkpoints (every few hundred records, or
 * every minute), each a whole authenticated state (writer.ts) whose bookmarks say which workflows are partial and how
 * far they got. A run stopped at any moment leaves the last one; the next run uses what it holds as any state (the
 * changes since it looked are listed, bounds.ts), so it reads again only what may have changed and what it lacks.
 */

/** How far a sync got: distinct instances whose records are in the state, of how many the service counted. */
export interface SyncProgress {
  /** workflows being read in full (no complete state of them before this run) */
  workflows: number;
  synced: number;
  /** the service's count of the selections listed (the largest per workflow); null before a listing said */
  total: number | null;
  /** requests of this run so far, and instances it read from the service: the pace of what is left */
  requests: number;
  readThisRun: number;
  /** the same per workflow being read in full, when the run knows them (a partial plan names them) */
  perWorkflow?: { workflow_id: number; synced: number; total: number | null }[];
}

export interface CheckpointPolicy {
  /** a checkpoint after this many records written (default 250) */
  everyRecords: number;
  /** and at least this often while a sync goes on (default 60 s) */
  everyMs: number;
}

export const DEFAULT_CHECKPOINTS: CheckpointPolicy = { everyRecords: 250, everyMs: 60_000 };

/** Decides when a checkpoint is due, and writes one at a time (calls race: the engine reads several at once). */
export class Checkpoints {
  private records = 0;
  private lastAt: number;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly policy: CheckpointPolicy,
    private readonly write: () => Promise<void>,
    private readonly clock: () => number = Date.now,
  ) {
    this.lastAt = clock();
  }

  /** A record was written (or kept) into the next state. */
  counted(n = 1): void {
    this.records += n;
  }

  /** Writes a checkpoint when one is due and `syncing`; a failure to write stops further checkpoints (the writer says why at commit). */
  async maybe(syncing: boolean): Promise<void> {
    if (!syncing || this.writing) return;
    if (this.records < this.policy.everyRecords && this.clock() - this.lastAt < this.policy.everyMs) return;
    await this.now();
  }

  /** Writes one now (a stop, a deadline), after the one being written, if any. */
  async now(): Promise<void> {
    while (this.writing) await this.writing;
    this.records = 0;
    this.lastAt = this.clock();
    this.writing = this.write().finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }
}

/** "synced 41,200 of ~100,000 instances, ~1 h 05 min left at 100 requests a minute" (rate 0: no limit, no time). */
export function syncLine(p: SyncProgress, ratePerMin: number, duration: (ms: number) => string): string {
  const n = (v: number): string => v.toLocaleString("en-US");
  const of = p.total !== null && p.total >= p.synced ? ` of ~${n(p.total)}` : "";
  const left = syncLeftMs(p, ratePerMin);
  const time = left === undefined ? "" : `, ~${duration(left)} left at ${n(ratePerMin)} requests a minute`;
  return `synced ${n(p.synced)}${of} instances${time}`;
}

/** Time left at the key's rate: the instances not yet read, at this run's requests per instance read (at least 1). */
export function syncLeftMs(p: SyncProgress, ratePerMin: number): number | undefined {
  if (p.total === null || ratePerMin <= 0) return undefined;
  const perInstance = p.readThisRun > 0 ? Math.max(1, p.requests / p.readThisRun) : 1;
  return (Math.max(0, p.total - p.synced) * perInstance * 60_000) / ratePerMin;
}

/** The request log behind GET /__sandbox/requests: every /api request in arrival order, with the status answered. */

export interface RequestLogEntry {
  method: string;
  /** full request path as received, e.g. /api/instances/5/complete_step/ (no query string) */
  path: string;
  query: Record<string, string | string[]>;
  body: unknown;
  status: number;
  /** ISO time the request arrived (wall clock) */
  at: string;
  /** true when the mutation was applied and the connection then closed without an answer (reset fault) */
  reset?: boolean;
}

/** Oldest entries are dropped beyond this, so a long-running sandbox does not grow without bound. */
export const MAX_LOG_ENTRIES = 100_000;

export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private counted = 0;

  add(entry: RequestLogEntry): void {
    this.counted++;
    this.entries.push(entry);
    if (this.entries.length > MAX_LOG_ENTRIES) this.entries.splice(0, this.entries.length - MAX_LOG_ENTRIES);
  }

  /** Copies, so callers cannot change the log. */
  list(): RequestLogEntry[] {
    return this.entries.map((e) => structuredClone(e));
  }

  /** Requests since the last clear, beyond the cap too, without copying anything (a benchmark polls it). */
  get count(): number {
    return this.counted;
  }

  clear(): void {
    this.entries = [];
    this.counted = 0;
  }
}

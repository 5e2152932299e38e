/**
 * The `progress` log event (`--log-format json`): the figures of the terminal line as fields, at most once every
 * `everyMs` (10 s), so a run of hours leaves a few hundred lines a collector can graph, not one per change.
 */
import type { LogFields, Logger } from "../../log/types.js";

export const PROGRESS_EVENT_EVERY_MS = 10_000;

export class ProgressEvents {
  private lastAt: number | undefined;

  constructor(
    private readonly log: Logger,
    private readonly everyMs = PROGRESS_EVENT_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `fields` as a `progress` event unless one was logged less than `everyMs` ago. True when logged. */
  offer(phase: "plan" | "apply", fields: () => LogFields): boolean {
    const t = this.now();
    if (this.lastAt !== undefined && t - this.lastAt < this.everyMs) return false;
    this.lastAt = t;
    this.log.event("progress", { phase, ...fields() });
    return true;
  }
}

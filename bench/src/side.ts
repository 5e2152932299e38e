/**
 * What one side of the benchmark (flowrules or the naive baseline) reports, and how it tells the orchestrator that
 * a phase ended (so the orchestrator can cut the sandbox's request log there).
 */

export type SideName = "flowrules" | "naive";
export type PhaseName = "plan" | "apply";

/** Called at the end of each phase; resolves once the orchestrator has taken the request log of that phase. */
export type PhaseHook = (phase: PhaseName) => Promise<void>;

export interface PhaseResult {
  phase: PhaseName;
  wallMs: number;
  /** highest `process.memoryUsage().rss` sampled so far (every 20 ms and at the phase's end) */
  peakRssBytes: number;
  /** the process's lifetime maximum resident set (getrusage) at the phase's end */
  maxRssBytes: number;
}

/** What the side decided and how its mutations ended, in its own words (the orchestrator checks the data). */
export interface SideOutcome {
  /** complete_step changes decided (planned) */
  completes: number;
  /** aborts decided (planned) */
  aborts: number;
  /** mutation requests not answered 2xx (naive), or 1 when `flowrules apply` exited non-zero */
  failed: number;
  /** flowrules only: the summary `flowrules apply` printed */
  applySummary?: string;
}

export interface SideResult {
  side: SideName;
  phases: PhaseResult[];
  /** lifetime maximum resident set of the process that ran the side (getrusage ru_maxrss) */
  maxRssBytes: number;
  outcome: SideOutcome;
}

/** Samples the resident set while a side runs: getrusage alone gives no per-phase picture. */
export class RssSampler {
  private max = process.memoryUsage.rss();
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 20) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    const rss = process.memoryUsage.rss();
    if (rss > this.max) this.max = rss;
  }

  peak(): number {
    this.sample();
    return this.max;
  }

  /** ru_maxrss is in kilobytes on Linux. */
  maxRss(): number {
    return process.resourceUsage().maxRSS * 1024;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

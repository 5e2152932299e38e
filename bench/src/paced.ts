/**
 * The paced scenario of `npm run bench`: plans against a sandbox that enforces 100 requests per sliding window (429
 * with Retry-After beyond it), with three clients side by side:
 *
 * - `before`: the token bucket the client used to have (burst 5, then evenly spaced at 100 a window), kept here as
 *   the baseline;
 * - `after`: the sliding-window limiter (95 of 100 in any window, counted from each answer);
 * - `off`: no client-side limit, only the service's 429s and Retry-After.
 *
 * Wall time is set against the window's own bound: R requests at 100 a window cannot all be sent before
 * (ceil(R/100) − 1) windows have passed. The window is scaled down (6 s instead of 60 s by default; the arithmetic is
 * the same) so the scenario takes a minute or two, not an hour.
 */
import { performance } from "node:perf_hooks";
import { createClient, type Grant, type RateLimitInfo, type RequestLimiter } from "#flowrules/api/index.js";
import { runPlan } from "#flowrules/engine/plan-live.js";
import { loadRules } from "#flowrules/rules/index.js";
import { sleep } from "#flowrules/api/retry.js";
import { startSandbox } from "#flowrules/sandbox/index.js";
import { duration } from "./table.js";

/** the service's limit per window */
export const PACED_LIMIT = 100;
/** the starter rule that reads every selected record: requests grow with the instances */
const RULE = "overdue-expenses-by-tag";
/** instances per run: about 30, 140 and 280 requests */
const SIZES = [200, 1_000, 2_000];

export type PacedSide = "before" | "after" | "off";

export interface PacedSideRun {
  side: PacedSide;
  wallMs: number;
  /** requests the sandbox answered, 429s included */
  requests: number;
  refused: number;
  /** the plan came out whole (no rule failed) */
  complete: boolean;
}

export interface PacedRun {
  instances: number;
  /** requests of the plan (answered 2xx) */
  planRequests: number;
  /** (ceil(R/limit) − 1) windows: the earliest the last request may leave */
  boundMs: number;
  sides: PacedSideRun[];
}

export interface PacedResults {
  limit: number;
  windowMs: number;
  runs: PacedRun[];
}

/** The replaced limiter, as it was: a token bucket (burst ≈ 5 % of the rate) plus the global pause a 429 sets. */
class TokenBucket implements RequestLimiter {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last = performance.now();
  private pausedUntil = 0;
  private granted = 0;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(perWindow: number, windowMs: number) {
    this.perMs = perWindow / windowMs;
    this.burst = Math.min(10, Math.max(1, Math.round(perWindow / 20)));
    this.tokens = this.burst;
  }

  acquire(): Promise<Grant> {
    const turn = this.tail.then(() => this.take());
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + ms);
    this.tokens = 0;
    this.last = Math.max(this.last, this.pausedUntil);
  }

  pausedFor(): number {
    return Math.max(0, this.pausedUntil - performance.now());
  }

  quotaFor(): number {
    return 0;
  }

  finished(_ticket: number, _info: RateLimitInfo): void {
    // the bucket read no rate-limit headers
  }

  private async take(): Promise<Grant> {
    const start = performance.now();
    for (;;) {
      const t = performance.now();
      if (t < this.pausedUntil) {
        await sleep(this.pausedUntil - t);
        continue;
      }
      this.tokens = Math.min(this.burst, this.tokens + Math.max(0, t - this.last) * this.perMs);
      this.last = Math.max(this.last, t);
      if (this.tokens >= 1) {
        this.tokens -= 1;
        this.granted += 1;
        return { waitedMs: performance.now() - start, ticket: this.granted };
      }
      await sleep(Math.ceil((1 - this.tokens) / this.perMs));
    }
  }
}

async function runSide(
  side: PacedSide,
  instances: number,
  windowMs: number,
  opts: { seed: number; latencyMs: number; concurrency: number },
): Promise<PacedSideRun & { ok: number }> {
  const loaded = await loadRules(["rules/"], { only: [RULE] });
  if (!loaded.ruleSet) throw new Error(`the starter rule ${RULE} did not load`);
  const now = new Date("2026-11-01T12:00:00.000Z");
  const sb = await startSandbox({
    port: 0,
    instances,
    seed: opts.seed,
    now,
    latencyMs: opts.latencyMs,
    rateLimitPerMin: PACED_LIMIT,
    rateLimitWindowMs: windowMs,
  });
  const client = createClient({
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    concurrency: opts.concurrency,
    rateLimitPerMin: side === "off" ? 0 : PACED_LIMIT,
    rateLimitWindowMs: windowMs,
    maxRetryTimeMs: 3_600_000,
    ...(side === "before" ? { limiter: new TokenBucket(PACED_LIMIT, windowMs) } : {}),
  });
  try {
    const t0 = performance.now();
    const plan = await runPlan({ client, ruleSet: loaded.ruleSet, now });
    const wallMs = performance.now() - t0;
    const log = sb.requests();
    return {
      side,
      wallMs,
      requests: log.length,
      refused: log.filter((r) => r.status === 429).length,
      ok: log.filter((r) => r.status >= 200 && r.status < 300).length,
      complete: plan.errors.length === 0,
    };
  } finally {
    await client.close();
    await sb.close();
  }
}

export async function runPaced(
  opts: { seed: number; latencyMs: number; concurrency: number; windowMs: number },
  log: (line: string) => void,
): Promise<PacedResults> {
  const runs: PacedRun[] = [];
  for (const instances of SIZES) {
    const sides: PacedSideRun[] = [];
    let planRequests = 0;
    for (const side of ["before", "after", "off"] as const) {
      const { ok, ...run } = await runSide(side, instances, opts.windowMs, opts);
      planRequests = Math.max(planRequests, ok);
      sides.push(run);
      log(
        `  paced ${instances} instances, ${side.padEnd(6)} ${String(run.requests).padStart(4)} requests, ${run.refused} answered 429, in ${duration(run.wallMs)}${run.complete ? "" : " — PLAN INCOMPLETE"}`,
      );
    }
    runs.push({ instances, planRequests, boundMs: (Math.ceil(planRequests / PACED_LIMIT) - 1) * opts.windowMs, sides });
  }
  return { limit: PACED_LIMIT, windowMs: opts.windowMs, runs };
}

export function renderPaced(r: PacedResults): string {
  const cell = (s: PacedSideRun | undefined, bound: number): string =>
    s
      ? `${duration(s.wallMs)}${bound > 0 ? ` (${(s.wallMs / bound).toFixed(2)}×)` : ""}, ${s.refused} × 429${s.complete ? "" : ", incomplete"}`
      : "–";
  const lines = [
    `## Paced: ${r.limit} requests per sliding ${r.windowMs / 1000} s window${r.windowMs === 60_000 ? "" : " (a scaled minute)"}`,
    "",
    "Wall time of `plan` against the window's bound ((ceil(R/100) − 1) windows), and the 429s met.",
    "before = the old token bucket (burst 5, then evenly spaced); after = the sliding window (95 a window); off = no client limit.",
    "",
    "| instances | plan requests R | window bound | before | after | off |",
    "|---:|---:|---:|---|---|---|",
  ];
  for (const run of r.runs) {
    const side = (name: PacedSide): PacedSideRun | undefined => run.sides.find((s) => s.side === name);
    lines.push(
      `| ${run.instances} | ${run.planRequests} | ${duration(run.boundMs)} | ${cell(side("before"), run.boundMs)} | ${cell(side("after"), run.boundMs)} | ${cell(side("off"), run.boundMs)} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

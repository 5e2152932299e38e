/**
 * Progress in words, from the engine's progress data: one short line for the terminal, and the fields of the JSON
 * `progress` event. Pure functions of their inputs (and of the time passed in), so both views say the same.
 */
import type { ApplyProgress } from "../../apply/types.js";

/** Time spent waiting, as the API client reported it (ClientEvent "rate-limited"). */
export interface Waits {
  /** held back by our own rate limiter */
  limiterMs: number;
  /** paused after the service answered 429 */
  serverMs: number;
}

export const noWaits = (): Waits => ({ limiterMs: 0, serverMs: 0 });

const n = (v: number): string => v.toLocaleString("en-US");

/** "45 s", "12 min", "3 h 05 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, "0")} min`;
}

export interface ApplyFigures {
  done: number;
  total: number;
  applied: number;
  stale: number;
  failed: number;
  deferred: number;
  /** changes settled per minute by this run */
  rate_per_min: number;
  /** undefined until there is a rate to go by */
  eta_s: number | undefined;
  elapsed_s: number;
  waited_rate_limit_s: number;
  waited_429_s: number;
  checks: number;
}

/**
 * Figures of an apply. The rate is what this run achieved; before there is one, the ETA assumes one request per
 * change under the configured rate limit (`ratePerMin`, 0 = none).
 */
export function applyFigures(p: ApplyProgress, waits: Waits, now: number, ratePerMin: number): ApplyFigures {
  const elapsedMs = Math.max(1, now - p.startedAt);
  const rate = p.settledThisRun > 0 ? (p.settledThisRun / elapsedMs) * 60_000 : 0;
  const left = Math.max(0, p.total - p.settled);
  const perMin = rate > 0 ? rate : ratePerMin;
  const eta = left === 0 ? 0 : perMin > 0 ? (left / perMin) * 60 : undefined;
  return {
    done: p.settled,
    total: p.total,
    applied: p.applied,
    stale: p.stale,
    failed: p.failed,
    deferred: p.deferred,
    rate_per_min: Math.round(rate * 10) / 10,
    eta_s: eta === undefined ? undefined : Math.round(eta),
    elapsed_s: Math.round(elapsedMs / 1000),
    waited_rate_limit_s: Math.round(waits.limiterMs / 1000),
    waited_429_s: Math.round(waits.serverMs / 1000),
    checks: p.checks,
  };
}

export function applyLine(p: ApplyProgress, f: ApplyFigures): string {
  const pct = f.total > 0 ? Math.floor((f.done / f.total) * 100) : 100;
  const parts = [`apply: ${n(f.done)}/${n(f.total)} changes (${pct}%)`];
  if (p.phase === "checking") parts.push("checking staleness");
  if (f.rate_per_min > 0) parts.push(`${n(Math.round(f.rate_per_min))}/min`);
  if (f.eta_s !== undefined && f.done < f.total) parts.push(`ETA ${duration(f.eta_s * 1000)}`);
  const outcomes = [
    `${n(f.applied)} applied`,
    f.stale ? `${n(f.stale)} stale` : "",
    f.failed ? `${n(f.failed)} failed` : "",
    f.deferred ? `${n(f.deferred)} deferred` : "",
  ].filter(Boolean);
  parts.push(outcomes.join(", "));
  const waited = waitedText(f);
  if (waited) parts.push(waited);
  return parts.join(" · ");
}

/** Time spent waiting on the client's limiter and on the service's 429s, when any. */
function waitedText(f: { waited_rate_limit_s?: number; waited_429_s?: number }): string {
  const waited = [
    f.waited_rate_limit_s ? `${duration(f.waited_rate_limit_s * 1000)} on the rate limit` : "",
    f.waited_429_s ? `${duration(f.waited_429_s * 1000)} on 429s` : "",
  ].filter(Boolean);
  return waited.length > 0 ? `waited ${waited.join(", ")}` : "";
}

/** Where a plan stands: the rule being planned, with its instances and requests. */
export interface PlanProgressState {
  rule: string;
  /** rules planned before this one / of the rule set */
  ruleIndex: number;
  rules: number;
  instancesDone: number;
  instancesTotal: number;
  /** requests made for this rule so far */
  requests: number;
}

export interface PlanFigures {
  rule: string;
  rule_index: number;
  rules: number;
  instances_done: number;
  instances_total: number;
  requests_done: number;
  /** requests this rule is expected to need: those so far, scaled to the whole selection */
  requests_expected: number;
  eta_s: number | undefined;
  waited_rate_limit_s: number;
  waited_429_s: number;
}

/**
 * Figures of a plan. The rule's expected requests extrapolate its cost per instance so far; the ETA is the
 * requests left under the rate limit (`ratePerMin`), or at the pace seen so far without one.
 */
export function planFigures(
  s: PlanProgressState,
  waits: Waits,
  ruleElapsedMs: number,
  ratePerMin: number,
): PlanFigures {
  const expected =
    s.instancesDone > 0 && s.instancesTotal > s.instancesDone
      ? Math.max(s.requests, Math.round((s.requests / s.instancesDone) * s.instancesTotal))
      : s.requests;
  const left = expected - s.requests;
  const observed = ruleElapsedMs > 0 && s.requests > 0 ? (s.requests / ruleElapsedMs) * 60_000 : 0;
  const perMin = ratePerMin > 0 ? Math.min(ratePerMin, observed || ratePerMin) : observed;
  const eta = left <= 0 ? 0 : perMin > 0 ? (left / perMin) * 60 : undefined;
  return {
    rule: s.rule,
    rule_index: s.ruleIndex,
    rules: s.rules,
    instances_done: s.instancesDone,
    instances_total: s.instancesTotal,
    requests_done: s.requests,
    requests_expected: expected,
    eta_s: eta === undefined ? undefined : Math.round(eta),
    waited_rate_limit_s: Math.round(waits.limiterMs / 1000),
    waited_429_s: Math.round(waits.serverMs / 1000),
  };
}

export function planLine(f: PlanFigures): string {
  const parts = [
    `plan: rule ${f.rule_index}/${f.rules} ${f.rule}`,
    `${n(f.instances_done)}/${n(f.instances_total)} instances`,
    `${n(f.requests_done)}/${n(f.requests_expected)} requests`,
  ];
  if (f.eta_s !== undefined && f.requests_done < f.requests_expected) parts.push(`ETA ${duration(f.eta_s * 1000)}`);
  const waited = waitedText(f);
  if (waited) parts.push(waited);
  return parts.join(" · ");
}

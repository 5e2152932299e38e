/**
 * Progress of long runs, where someone can see it: on a terminal, a line redrawn in place; with `--log-format json`,
 * a `progress` event at most every 10 s; on a text stderr that is not a terminal (a CI log, a file), nothing — those
 * keep only the lines that stay true.
 *
 * The engine reports where it stands as data (ApplyProgress, PlanProgress); the API client reports waits on the rate
 * limit and on 429 answers (ClientEvent "rate-limited") and each request. This view turns both into words.
 */
import type { ClientEvent } from "../../api/index.js";
import type { ApplyProgress } from "../../apply/types.js";
import type { PlanProgress } from "../../engine/plan-live.js";
import type { CommandIO } from "../../log/command-io.js";
import { ProgressEvents } from "../events/progress.js";
import {
  applyFigures,
  applyLine,
  noWaits,
  planFigures,
  planLine,
  type PlanProgressState,
  type Waits,
} from "./format.js";
import { TerminalLine } from "./terminal.js";

export interface ProgressView {
  apply(p: ApplyProgress): void;
  /** one page of a rule's selection planned */
  plan(p: PlanProgress): void;
  /** the API client's events: waits and requests */
  clientEvent(e: ClientEvent): void;
  /** before a plain stderr line: takes the progress line away (it comes back with the next update) */
  clear(): void;
  /** the phase ended: the last state stays on screen */
  finish(): void;
  /** requests counted so far */
  readonly requests: number;
}

export interface ProgressViewOptions {
  quiet: boolean;
  /** the configured client-side limit, requests a minute (0 = none): the ETA before a pace is known */
  ratePerMin: number;
  /** rules of the plan, for "rule i/n" */
  rules?: number;
  now?: () => number;
  /** terminal width */
  columns?: () => number;
  /** how often the line is redrawn when nothing happens (waits on the rate limit still tick); 0 = never */
  tickMs?: number;
  eventEveryMs?: number;
}

export function progressView(io: CommandIO, opts: ProgressViewOptions): ProgressView {
  const now = opts.now ?? Date.now;
  const waits: Waits = noWaits();
  let requests = 0;
  const structured = io.log?.structured === true;
  const terminal =
    !structured && io.stderrIsTTY && !opts.quiet
      ? new TerminalLine(io.stderr, opts.columns ?? (() => process.stderr.columns || 100), 200, now)
      : undefined;
  const events = structured && io.log ? new ProgressEvents(io.log, opts.eventEveryMs, now) : undefined;

  // the latest state, redrawn by the tick while nothing else happens (a long wait on the rate limit)
  let redraw: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const tickMs = opts.tickMs ?? 1000;
  const startTicking = (): void => {
    if (timer || tickMs <= 0 || (!terminal && !events)) return;
    timer = setInterval(() => redraw?.(), tickMs);
    timer.unref();
  };

  // plan: per rule, requests counted from the rule's first page on (the previous rule's last page is the boundary)
  let rule: { name: string; index: number; requestsAtStart: number; startedAt: number } | undefined;
  let planState: PlanProgressState | undefined;
  let lastPageAt = 0;

  const showPlan = (force: boolean): void => {
    if (!planState || !rule) return;
    planState.requests = requests - rule.requestsAtStart;
    const f = planFigures(planState, waits, now() - rule.startedAt, opts.ratePerMin);
    terminal?.draw(planLine(f), force);
    events?.offer("plan", () => ({ ...f }));
  };

  return {
    get requests() {
      return requests;
    },
    apply(p) {
      if (!terminal && !events) return;
      const show = (force: boolean): void => {
        const f = applyFigures(p, waits, now(), opts.ratePerMin);
        terminal?.draw(applyLine(p, f), force);
        events?.offer("apply", () => ({ ...f }));
      };
      redraw = () => show(true);
      startTicking();
      show(false);
    },
    plan(p) {
      if (!terminal && !events) return;
      if (!rule || rule.name !== p.rule) {
        // this rule's requests began after the previous rule's last page
        rule = { name: p.rule, index: (rule?.index ?? 0) + 1, requestsAtStart: lastPageAt, startedAt: now() };
      }
      lastPageAt = requests;
      planState = {
        rule: p.rule,
        ruleIndex: rule.index,
        rules: Math.max(opts.rules ?? rule.index, rule.index),
        instancesDone: p.done,
        instancesTotal: p.total,
        requests: requests - rule.requestsAtStart,
      };
      redraw = () => showPlan(true);
      startTicking();
      showPlan(false);
    },
    clientEvent(e) {
      if (e.type === "request") requests += 1;
      else if (e.type === "rate-limited") {
        if (e.source === "client") waits.limiterMs += e.delayMs;
        else waits.serverMs += e.delayMs;
      }
    },
    clear() {
      terminal?.clear();
    },
    finish() {
      if (timer) clearInterval(timer);
      timer = undefined;
      redraw = undefined;
      terminal?.finish();
    },
  };
}

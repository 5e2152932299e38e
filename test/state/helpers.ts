/** Plans with and without a state dir, at the same moment, against one sandbox over loopback HTTP. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stateKey } from "../../src/state/mac.js";
import { STATE_FORMAT, STATE_FORMAT_VERSION, type StateHeader } from "../../src/state/schema.js";
import { createClient, type ApiClient } from "../../src/api/index.js";
import { mutatingKind } from "../../src/actions/index.js";
import { newestUpdate, pollWorkflow } from "../../src/watch/poll.js";
import { runPlan } from "../../src/engine/plan-live.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  openRunState,
  readInFull,
  type RunState,
  type StateChoice,
  type StateCounts,
  type ListedChanges,
  type StateSettings,
} from "../../src/state/index.js";

/**
 * The busy watcher's two rules (the approval of small claims, the flag of large orders): rule entries for a
 * `rules:` list, shared by the tests of what a watcher's cycle asks.
 */
export const BUSY_RULES = `  - name: approve-small
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, currency: { step: 20111, action: 50223 } }
    select: { status: [running], active_step_id: 20111, tags: [expenses] }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "Approved" } } ] }
  - name: flag-large
    workflow: 1044
    fields: { quantity: { step: 20130, action: 50261 }, price: { step: 20130, action: 50262 } }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity * fields.price > 5000
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "Large order" } } ] }
`;

/** One workflow's changes listing as a watcher's poll hands it to the state. */
type Listed = ListedChanges extends ReadonlyMap<number, infer L> ? L : never;

/**
 * A watcher's polls of these workflows as its loop asks them (src/watch/poll.ts): the bookmarks (each workflow's
 * newest update) first, then after each cycle every workflow's poll from when the next run lists changes (the
 * state's `changesFrom`), the bookmarks moved on; what the polls listed, for the next run to take.
 */
export async function watcherPolls(
  poller: ApiClient,
  workflows: readonly number[],
): Promise<{ poll(from: ReadonlyMap<number, string>): Promise<Map<number, Listed>> }> {
  const bookmarks = new Map<number, string>();
  for (const pid of workflows) {
    const newest = await newestUpdate(poller, pid, undefined);
    if (newest) bookmarks.set(pid, newest.last_updated_time);
  }
  return {
    async poll(from) {
      const listed = new Map<number, Listed>();
      for (const pid of workflows) {
        const got = await pollWorkflow(poller, pid, bookmarks.get(pid), undefined, from.get(pid));
        if (got.listed) listed.set(pid, got.listed);
        if (got.newest) bookmarks.set(pid, got.newest.last_updated_time);
      }
      return listed;
    },
  };
}

type RunContext = Parameters<typeof openRunState>[1];

/**
 * A run's state opened as the CLI opens it, with the sandbox's administrator key and version "test"; warnings
 * dropped unless `more.warn` takes them.
 */
export function openTestRun(
  settings: StateSettings,
  baseUrl: string,
  now: Date,
  rules: RunContext["rules"],
  more: Partial<RunContext> = {},
): ReturnType<typeof openRunState> {
  return openRunState(settings, {
    baseUrl,
    apiKey: "sandbox-admin",
    now,
    rules,
    version: "test",
    warn: () => undefined,
    ...more,
  });
}

/** A state file's header, key and run mark as the file tests write them. */
export const HEADER: StateHeader = {
  format: STATE_FORMAT,
  format_version: STATE_FORMAT_VERSION,
  flowrules_version: "test",
  base_url: "http://127.0.0.1:1/api",
  key_digest: null,
  written_at: "2026-06-15T12:00:00.000Z",
  run_at: "2026-06-15T12:00:00.000Z",
  rules: { a: "x" },
};
export const KEY = stateKey("test-key");
export const MARK = {
  run_at: "2026-06-15T12:00:00.000Z",
  newest_seen: null,
  synced_at: "2026-06-15T12:00:00.000Z",
  structure: null,
};

export async function tempDir(prefix = "flowrules-state-"): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export function client(sb: RunningSandbox, extra: { maxAttempts?: number; retryBaseMs?: number } = {}) {
  return createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0, ...extra });
}

/** A client of two requests in flight whose run is cut (aborted) once `after` requests were sent. */
export function cutClient(
  sb: RunningSandbox,
  after: number,
): { client: ReturnType<typeof createClient>; stop: AbortController } {
  const stop = new AbortController();
  let sent = 0;
  const c = createClient({
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: 0,
    concurrency: 2,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.type === "request" && ++sent >= after) stop.abort();
    },
  });
  return { client: c, stop };
}

/** The plan without what legitimately differs between two runs: when it was made and how many requests it took. */
export function comparable(plan: Plan): unknown {
  const { created_at: _created, summary, ...rest } = plan as Plan & { digest?: string };
  const { requests: _requests, ...counts } = summary as typeof summary & { requests?: number };
  const { digest: _digest, ...body } = rest as typeof rest & { digest?: string };
  return { ...body, summary: counts };
}

export async function statelessPlan(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  opts: { recordSeen?: boolean } = {},
): Promise<{ plan: Plan; requests: number }> {
  const c = client(sb);
  try {
    const plan = await runPlan({ client: c, ruleSet, now, optOutTag: "no-automation", ...opts });
    return { plan, requests: c.stats().total };
  } finally {
    await c.close();
  }
}

export interface StatefulRun {
  plan: Plan;
  requests: number;
  counts: StateCounts | undefined;
  warnings: string[];
  /** after the commit: per workflow, from when the next run lists changes */
  changesFrom: ReadonlyMap<number, string>;
}

export interface StatefulOptions {
  client?: { maxAttempts?: number; retryBaseMs?: number };
  /** each request choice, the state's included (`--explain-requests`) */
  explain?: (c: StateChoice) => void;
  /** after the plan, before the state is written: apply through `run.applying(...)` as `apply --state` does */
  afterPlan?: (plan: Plan, run: RunState, client: ApiClient) => Promise<void>;
  /** the plan records what it saw of the instances it changes, as `apply` and `watch --apply` plan (src/engine/seen.ts) */
  recordSeen?: boolean;
  /** changes listings a watcher's poll asked just before the run (src/watch/poll.ts), handed to the state */
  listed?: ListedChanges;
}

/** A run with state, as `plan --state DIR` does it: open (lock), wrap the client, plan, (apply,) write, release. */
export async function statefulPlan(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  settings: StateSettings,
  options: StatefulOptions = {},
): Promise<StatefulRun> {
  const c = client(sb, options.client ?? {});
  const warnings: string[] = [];
  try {
    const explain = options.explain ? { explain: options.explain } : {};
    const run = await openTestRun(settings, c.baseUrl, now, ruleSet.rules, {
      warn: (m) => warnings.push(m),
      ...explain,
      ...(options.listed ? { listed: options.listed } : {}),
    });
    try {
      const plan = await runPlan({
        client: run.wrap(c),
        ruleSet,
        now,
        optOutTag: "no-automation",
        onWarning: (m) => warnings.push(m),
        ...(options.recordSeen === undefined ? {} : { recordSeen: options.recordSeen }),
      });
      const requests = c.stats().total;
      const counts = run.counts();
      run.explainAnswers();
      if (readInFull(plan)) {
        await options.afterPlan?.(plan, run, c);
        await run.commit();
      }
      return { plan, requests, counts, warnings, changesFrom: run.changesFrom() };
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

/** Sends a plan's enforce changes through `client`, each kind as apply sends it (no journal, no staleness check). */
export async function sendChanges(client: ApiClient, plan: Plan): Promise<number> {
  let sent = 0;
  const batched = new Map<string, number[]>();
  for (const change of plan.changes) {
    if (change.audit === true) continue;
    const sender = mutatingKind(change.kind).send;
    if (sender.mode === "batch") batched.set(change.kind, [...(batched.get(change.kind) ?? []), change.instance_id]);
    else {
      await sender.send(client, change);
      sent++;
    }
  }
  for (const [kind, ids] of batched) {
    const sender = mutatingKind(kind).send;
    for (let i = 0; i < ids.length && sender.mode === "batch"; i += 500)
      sent += (await sender.send(client, ids.slice(i, i + 500))).length;
  }
  return sent;
}

/** `client`, but after each write's answer `after(id)` runs: someone else at work right after our write. */
export function afterEachWrite(client: ApiClient, after: (id: number) => void): ApiClient {
  return new Proxy(client, {
    get(target, prop) {
      if (prop === "completeStep") {
        return async (...args: Parameters<ApiClient["completeStep"]>) => {
          const record = await target.completeStep(...args);
          after(args[0]);
          return record;
        };
      }
      if (prop === "bulkAbort") {
        return async (ids: number[]) => {
          const answer = await target.bulkAbort(ids);
          for (const id of answer.ids) after(id);
          return answer;
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

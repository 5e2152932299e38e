/**
 * Pacing against the sandbox's real limit: 100 requests in any sliding 60 s per key, 429 with Retry-After beyond it.
 * Every figure comes from the sandbox's request log (requests, 429s); nothing is timed.
 *
 * A minute is too long for a test, so where a run outlasts one window Date is sped up (timers stay real): both the
 * sandbox's window and the client's are read from Date, so they both see a minute pass in a second and a half.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createClient, type ApiClient, type ClientEvent, type RequestStats } from "../../src/api/index.js";
import { connectionSettings } from "../../src/cli/settings.js";
import { planCommand } from "../../src/commands/plan.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { loadRules } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { memoryIO } from "../helpers/io.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
const LIMIT = 100;
/** the starter rule that reads every selected record (its report groups by tags): about 130 requests at 1,000 instances */
const READER = "overdue-expenses-by-tag";

let small: RunningSandbox;
let large: RunningSandbox;
let stopClock: (() => void) | undefined;

beforeAll(async () => {
  [small, large] = await Promise.all([
    startSandbox({ port: 0, instances: 400, seed: 3, now: NOW }),
    startSandbox({ port: 0, instances: 1000, seed: 3, now: NOW }),
  ]);
});
afterAll(async () => {
  await Promise.all([small.close(), large.close()]);
});
afterEach(() => {
  stopClock?.();
  stopClock = undefined;
  for (const sb of [small, large]) {
    sb.setFaults({ rateLimitPerMin: 0 });
    sb.clearRequests();
  }
});

/** Date runs `factor` times faster than real time until the returned function is called. */
function speedUpDate(factor: number): () => void {
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
  const stepMs = 25;
  const timer = setInterval(() => vi.setSystemTime(Date.now() + stepMs * (factor - 1)), stepMs);
  return () => {
    clearInterval(timer);
    vi.useRealTimers();
  };
}

async function rules(only: string[] = []): Promise<RuleSet> {
  const loaded = await loadRules(["rules/"], only.length > 0 ? { only } : undefined);
  if (!loaded.ruleSet) throw new Error(JSON.stringify(loaded.diagnostics));
  return loaded.ruleSet;
}

async function planWith(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  perMin: number,
  events: ClientEvent[] = [],
): Promise<{ plan: Plan; stats: RequestStats }> {
  const client: ApiClient = createClient({
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: perMin,
    onEvent: (e) => events.push(e),
  });
  try {
    const plan = await runPlan({ client, ruleSet, now: NOW });
    return { plan, stats: client.stats() };
  } finally {
    await client.close();
  }
}

const refused = (sb: RunningSandbox): number => sb.requests().filter((r) => r.status === 429).length;
const byId = (changes: PlannedChange[]): PlannedChange[] =>
  [...changes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
/** report groups as sets of instance ids per rule and key */
function groups(plans: Plan[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const p of plans) {
    for (const r of p.reports) {
      for (const g of r.groups) {
        const k = `${r.rule}\u0000${JSON.stringify(g.key)}`;
        const ids = out.get(k) ?? new Set<number>();
        for (const id of g.instance_ids) ids.add(id);
        out.set(k, ids);
      }
    }
  }
  return out;
}

describe("pacing under a limit of 100 requests a minute", () => {
  it("a plan that fits in one window goes at once: no 429, no wait", async () => {
    small.setFaults({ rateLimitPerMin: LIMIT });
    const events: ClientEvent[] = [];
    const { plan, stats } = await planWith(small, await rules(), LIMIT, events);
    expect(plan.errors).toEqual([]);
    const log = small.requests();
    expect(log.length).toBeGreaterThan(40);
    expect(log.length).toBeLessThanOrEqual(95);
    expect(refused(small)).toBe(0);
    expect(stats.rateLimitWaitMs).toBe(0);
    expect(events.filter((e) => e.type === "rate-limited")).toEqual([]);
  });

  it("with the client limit off, a plan of more than 100 requests still completes: its 429s are waited out, not failures", async () => {
    const ruleSet = await rules([READER]);
    const unlimited = await planWith(large, ruleSet, 0);
    expect(unlimited.plan.errors).toEqual([]);
    large.clearRequests();

    large.setFaults({ rateLimitPerMin: LIMIT });
    stopClock = speedUpDate(40);
    const events: ClientEvent[] = [];
    const { plan, stats } = await planWith(large, ruleSet, 0, events);
    stopClock();
    stopClock = undefined;

    const log = large.requests();
    expect(log.filter((r) => r.status === 200).length).toBeGreaterThan(LIMIT);
    expect(refused(large)).toBeGreaterThan(0);
    expect(stats.rateLimited).toBe(refused(large));
    expect(events.some((e) => e.type === "rate-limited" && e.source === "server")).toBe(true);
    // the very same plan as without any limit
    expect(plan.errors).toEqual([]);
    expect(plan.rules.map((r) => [r.name, r.selected, r.matched])).toEqual(
      unlimited.plan.rules.map((r) => [r.name, r.selected, r.matched]),
    );
    expect(groups([plan])).toEqual(groups([unlimited.plan]));
  }, 60_000);

  it("the client's window paces the same plan with no 429 at all, and says when it waits", async () => {
    large.setFaults({ rateLimitPerMin: LIMIT });
    stopClock = speedUpDate(40);
    const events: ClientEvent[] = [];
    const { plan, stats } = await planWith(large, await rules([READER]), LIMIT, events);
    stopClock();
    stopClock = undefined;
    expect(plan.errors).toEqual([]);
    expect(large.requests().length).toBeGreaterThan(LIMIT);
    expect(refused(large)).toBe(0);
    expect(stats.rateLimitWaitMs).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === "rate-limited")).toContainEqual(
      expect.objectContaining({ source: "client", reason: "window", budget: 95, windowMs: 60_000 }),
    );
  }, 60_000);

  it("three shards on one key split the default budget: together a handful of 429s at most, and exactly the unsharded plan", async () => {
    const env = { FLOWRULES_BASE_URL: large.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" };
    const plan = async (
      shard?: { index: number; count: number },
      flags: Record<string, unknown> = {},
    ): Promise<Plan> => {
      const connection = connectionSettings(flags, env, shard);
      const io = memoryIO(env);
      const code = await planCommand(
        {
          paths: ["rules/"],
          format: "json",
          detailedExitcode: false,
          rules: [READER, "auto-approve-small-expenses"],
          quiet: true,
          connection,
          now: NOW,
          ...(shard ? { shard } : {}),
        },
        io,
      );
      expect(code, io.err()).toBe(0);
      return JSON.parse(io.out()) as Plan;
    };
    const whole = await plan(undefined, { rateLimit: "0" }); // the reference, planned with no limit on either side
    expect(whole.changes.length).toBeGreaterThan(0);
    large.clearRequests();

    // each worker's settings: a third of the default 100 a minute
    expect(connectionSettings({}, env, { index: 0, count: 3 }).rateLimitPerMin).toBeCloseTo(LIMIT / 3, 6);
    expect(connectionSettings({ rateLimit: "60" }, env, { index: 0, count: 3 }).rateLimitPerMin).toBe(60);

    large.setFaults({ rateLimitPerMin: LIMIT });
    stopClock = speedUpDate(40);
    const shards = await Promise.all([0, 1, 2].map((index) => plan({ index, count: 3 })));
    stopClock();
    stopClock = undefined;

    const log = large.requests();
    expect(log.filter((r) => r.status === 200).length).toBeGreaterThan(LIMIT);
    expect(refused(large)).toBeLessThanOrEqual(5);
    const union = shards.flatMap((p) => p.changes);
    expect(new Set(union.map((c) => c.id)).size).toBe(union.length);
    expect(byId(union)).toEqual(byId(whole.changes));
    expect(groups(shards)).toEqual(groups([whole]));
    for (const r of whole.rules) {
      expect(shards.reduce((n, p) => n + (p.rules.find((x) => x.name === r.name)?.matched ?? 0), 0)).toBe(r.matched);
    }
  }, 90_000);
});

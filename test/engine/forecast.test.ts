/**
 * Forecasts (docs/forecast.md): `plan --at T` run now plans exactly what a plan run at T plans when nobody changed
 * anything in between (the sandbox's clock moved to T), over many seeds and instants, with a rule set using every
 * time-relative construct (test/fixtures/rules/forecast.yaml).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import { planRuleSet } from "../../src/commands/planning.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { createClient } from "../../src/api/index.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { fixtureRules } from "../helpers/rules.js";
import { forecastInstants, forecastPlans } from "../../src/engine/forecast.js";
import { forecastDocument } from "../../src/commands/forecast-document.js";
import { captureIO, connection } from "../apply/helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const HOUR = 3_600_000;
const rules = fixtureRules("forecast");

/** The plan without what differs between two runs of it: when it was made, the instant it is for, its request count. */
export function comparable(plan: Plan): unknown {
  const { created_at: _c, forecast_at: _f, summary, ...rest } = plan;
  const { requests: _r, ...counts } = summary as typeof summary & { requests?: number };
  return { ...rest, summary: counts };
}

/** A plan made now (the sandbox's clock) for the instant `at`, as `plan --at` makes it. */
export async function forecastAt(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  at: Date,
): Promise<{ plan: Plan; requests: number }> {
  const before = sb.requests().length;
  const plan = await planRuleSet(ruleSet, connection(sb), captureIO(), { quiet: true, at, optOutTag: "no-automation" });
  return { plan, requests: sb.requests().length - before };
}

/** A plan made when the clock reads `now` (engine and sandbox agree on it). */
export async function plannedAt(sb: RunningSandbox, ruleSet: RuleSet, now: Date): Promise<Plan> {
  const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  try {
    return await runPlan({ client: c, ruleSet, now, optOutTag: "no-automation" });
  } finally {
    await c.close();
  }
}

describe("plan --at", () => {
  it("run now, plans what a plan run at that instant plans when nobody changed anything (many seeds and instants)", async () => {
    let changing = 0;
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.integer({ min: 1, max: 14 * 24 }), { minLength: 1, maxLength: 3 }),
        async (seed, hours) => {
          const sb = await startSandbox({ port: 0, instances: 250, seed, now: START });
          try {
            const forecasts: Array<{ at: Date; plan: Plan; requests: number }> = [];
            for (const h of hours) {
              const at = new Date(START.getTime() + h * HOUR);
              forecasts.push({ at, ...(await forecastAt(sb, rules, at)) });
            }
            const today = await plannedAt(sb, rules, START);
            for (const f of forecasts.sort((a, b) => a.at.getTime() - b.at.getTime())) {
              expect(f.plan.forecast_at).toBe(f.at.toISOString());
              sb.advanceClock(f.at.getTime() - sb.store.now().getTime());
              const sent = sb.requests().length;
              const real = await plannedAt(sb, rules, f.at);
              const realRequests = sb.requests().length - sent;
              expect(comparable(f.plan), `seed ${seed}, +${(f.at.getTime() - START.getTime()) / HOUR}h`).toEqual(
                comparable(real),
              );
              if (JSON.stringify(comparable(real)) !== JSON.stringify(comparable(today))) changing++;
              // at most one plan's requests (counted by the sandbox): the same questions, asked with their bounds at
              // the instant, each time-relative selection listed once
              expect(f.requests).toBeLessThanOrEqual(realRequests);
              compared++;
            }
          } finally {
            await sb.close();
          }
        },
      ),
      { numRuns: 10, seed: 45, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(10);
    // time alone did change the plans: the property compared forecasts that differ from today's
    expect(changing).toBeGreaterThan(compared / 2);
  }, 240_000);
});

const DAY = 24 * HOUR;
/** a record read (GET /instances/{id}/) */
const RECORD = /^\/api\/instances\/\d+\/$/;
/** rules of test/fixtures/rules/forecast.yaml with a bound that moves with the clock */
const DATE_SELECTIONS = 11;

describe("forecast", () => {
  it("each point is the plan `plan --at` makes for it, for one plan's requests and one listing per time-relative selection (many seeds and steps)", async () => {
    let moved = 0;
    let checked = 0;
    let timeReads = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(6 * HOUR, 12 * HOUR, DAY),
        fc.integer({ min: 2, max: 9 }),
        async (seed, every, days) => {
          const sb = await startSandbox({ port: 0, instances: 250, seed, now: START });
          try {
            const instants = forecastInstants(START, new Date(START.getTime() + days * DAY), every);
            sb.clearRequests();
            const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
            let run;
            try {
              run = await forecastPlans({ client: c, ruleSet: rules, instants, optOutTag: "no-automation" });
            } finally {
              await c.close();
            }
            const forecastRequests = sb.requests();
            expect(forecastRequests.every((r) => r.method === "GET")).toBe(true);
            const doc = forecastDocument(run.points, {
              createdAt: START,
              baseUrl: sb.baseUrl,
              everyMs: every,
              requests: forecastRequests.length,
            });
            let perPoint = 0;
            // per point, what `plan --at` asks: its requests other than record reads, and the instances it reads
            const questions: number[] = [];
            const readByPoints = new Set<string>();
            for (const [i, point] of run.points.entries()) {
              sb.clearRequests();
              const direct = await forecastAt(sb, rules, point.at);
              perPoint += direct.requests;
              const log = sb.requests();
              questions.push(log.filter((r) => !RECORD.test(r.path)).length);
              for (const r of log) if (RECORD.test(r.path)) readByPoints.add(r.path);
              expect(comparable(point.plan), `seed ${seed}, point ${point.at.toISOString()}`).toEqual(
                comparable(direct.plan),
              );
              // the document says the same per rule: its changes at the point
              for (const r of doc.rules)
                expect(r.points[i]?.changes).toBe(direct.plan.changes.filter((c) => c.rule === r.rule).length);
            }
            moved += doc.rules.reduce((n, r) => n + (r.points.at(-1)?.added ?? 0) + (r.points.at(-1)?.removed ?? 0), 0);
            // one listing per time-relative selection: each fits one page (250 instances, 500 a page)
            const relative = DATE_SELECTIONS;
            // requests, counted by the sandbox: one plan's questions (listings, field pages) and one listing per
            // time-relative selection; records read once each, those some point's plan reads...
            const asked = forecastRequests.filter((r) => !RECORD.test(r.path));
            const reads = forecastRequests.filter((r) => RECORD.test(r.path)).map((r) => r.path);
            expect(new Set(reads).size, "no record is read twice").toBe(reads.length);
            expect(asked.length).toBeLessThanOrEqual(Math.max(...questions) + relative);
            // ...and, for a selection whose rules read no record, the records of the instances that enter or leave
            // it within the horizon, for their times: never more than one per point left
            const forTimes = reads.filter((path) => !readByPoints.has(path)).length;
            expect(forTimes).toBeLessThanOrEqual(run.points.length * relative);
            expect(forecastRequests.length).toBeLessThanOrEqual(
              Math.max(...questions) + relative + readByPoints.size + forTimes,
            );
            expect(forecastRequests.length).toBeLessThan(perPoint / 2);
            checked++;
            timeReads += forTimes;
          } finally {
            await sb.close();
          }
        },
      ),
      { numRuns: 5, seed: 4545, endOnFailure: true },
    );
    // time alone moved the plans of the forecasts compared
    expect(moved).toBeGreaterThan(0);
    expect(checked).toBe(5);
    // the records read for times alone are few: most are read anyway by the rules that read records
    expect(timeReads).toBeLessThan(checked * DATE_SELECTIONS);
  }, 240_000);
});

describe("forecast from a service that answers as real ones do", () => {
  it("still plans each point as `plan --at` does: times with offsets and microseconds, repeated items, small pages", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 1_000_000 }), async (seed) => {
        const sb = await startSandbox({
          port: 0,
          instances: 250,
          seed,
          now: START,
          quirks: ["offset-micros", "repeat-items"],
        });
        try {
          const instants = forecastInstants(START, new Date(START.getTime() + 6 * DAY), DAY);
          const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
          let run;
          try {
            run = await forecastPlans({ client: c, ruleSet: rules, instants, optOutTag: "no-automation" });
          } finally {
            await c.close();
          }
          for (const point of run.points) {
            const direct = await forecastAt(sb, rules, point.at);
            expect(comparable(point.plan), `seed ${seed}, point ${point.at.toISOString()}`).toEqual(
              comparable(direct.plan),
            );
          }
        } finally {
          await sb.close();
        }
      }),
      { numRuns: 2, seed: 4546, endOnFailure: true },
    );
  }, 120_000);
});

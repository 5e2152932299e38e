/**
 * A partial plan is never made-up data (docs/operating.md, "A partial plan"): after a first sync cut at a random
 * request (and cut before, at others, with people's work between), the rules the deadline cut are planned from what
 * the state's checkpoint holds. Over many seeds, against a stateless plan at the same moment: a rule named nowhere has
 * exactly the stateless plan's changes and report rows, a rule in `rules_partial` only some of them (over as many
 * instances as it says, fewer than the service counted), a rule in `rules_cut` none; a limit never lets through what
 * the whole selection would stop. Instances a stateless conflict names are set aside: a rule the state could not
 * plan cannot clash there.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { HeldMemo, openRunState, type StateSettings } from "../../src/state/index.js";
import { partialPlan } from "../../src/commands/partial-plan.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { fixtureRules } from "../helpers/rules.js";
import { statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const rules = fixtureRules("state-equality");

/** A run of `plan --state --max-duration … --partial` cut after `after` requests; the partial plan, or none. */
async function partialRun(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  settings: StateSettings,
  after: number,
  partial: boolean,
): Promise<Plan | undefined> {
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
  try {
    const run = await openRunState(settings, {
      baseUrl: c.baseUrl,
      apiKey: "sandbox-admin",
      now,
      rules: ruleSet.rules,
      version: "test",
      warn: () => undefined,
    });
    try {
      const memo = new HeldMemo(run.wrap(c));
      const plan = await runPlan({ client: memo, ruleSet, now, optOutTag: "no-automation" });
      if (!stop.signal.aborted || plan.errors.length === 0) {
        await run.commit();
        return undefined;
      }
      const synced = await run.checkpoint();
      if (!partial) return undefined;
      const cut = plan.errors.filter((e) => e.code === "api" && e.rule !== undefined).map((e) => e.rule as string);
      return await partialPlan({
        plan,
        sync: synced ?? run.partial,
        cut,
        ruleSet,
        state: run,
        memo,
        live: c,
        now,
        run: { optOutTag: "no-automation" },
      });
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

const changeKeys = (plan: Plan, rule: string, aside: Set<number>): string[] =>
  plan.changes
    .filter((c) => c.rule === rule && !aside.has(c.instance_id))
    .map((c) => JSON.stringify([c.instance_id, c.kind, c.request]))
    .sort();
const rows = (plan: Plan, rule: string): string[] =>
  plan.reports
    .filter((r) => r.rule === rule)
    .flatMap((r) => r.groups.flatMap((g) => g.instance_ids.map((id) => `${g.key}/${id}`)))
    .sort();

describe("a partial plan from what the state holds", () => {
  it("complete rules as a stateless plan, partial ones a part of it, cut ones nothing (many seeds, random cuts)", async () => {
    const seen = { complete: 0, partial: 0, partialWithData: 0, cut: 0, plans: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.record({ share: fc.double({ min: 0, max: 1, noNaN: true }), changes: fc.nat(6) }), {
          minLength: 0,
          maxLength: 2,
        }),
        fc.double({ min: 0.05, max: 0.98, noNaN: true }),
        fc.integer({ min: 3, max: 80 }),
        async (seed, before, share, everyRecords) => {
          const sb = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          try {
            const settings: StateSettings = {
              dir: dir.dir,
              resyncAfterMs: 30 * 24 * 3_600_000,
              fullRefresh: false,
              checkpoints: { everyRecords, everyMs: 3_600_000 },
            };
            const whole = (await statelessPlan(sb, rules, START)).requests;
            // earlier runs cut too, with people's work between them: the last one continues their sync
            for (const [n, b] of before.entries()) {
              await partialRun(sb, rules, START, settings, Math.max(1, Math.round(b.share * whole)), false);
              sb.simulate({ seed: seed + n, changes: b.changes });
            }
            const plan = await partialRun(sb, rules, START, settings, Math.max(1, Math.round(share * whole)), true);
            if (!plan) return; // it finished before its cut
            seen.plans++;
            const stateless = (await statelessPlan(sb, rules, START)).plan;
            const p = plan.partial;
            expect(p).toBeDefined();
            const aside = new Set(
              stateless.errors.flatMap((e) => (e.code === "conflict" && e.instance_id ? [e.instance_id] : [])),
            );
            const cut = new Set(p?.rules_cut ?? []);
            const part = new Map((p?.rules_partial ?? []).map((r) => [r.rule, r]));
            for (const rule of rules.rules.map((r) => r.name)) {
              const mine = changeKeys(plan, rule, aside);
              const full = changeKeys(stateless, rule, aside);
              if (cut.has(rule)) {
                seen.cut++;
                expect(mine, rule).toEqual([]);
                expect(rows(plan, rule), rule).toEqual([]);
              } else if (part.has(rule)) {
                seen.partial++;
                const r = part.get(rule);
                const entry = plan.rules.find((x) => x.name === rule);
                expect(entry?.selected).toBe(r?.selected);
                if (r?.total !== null && r?.total !== undefined) expect(r.selected).toBeLessThan(r.total);
                if (mine.length + rows(plan, rule).length > 0) seen.partialWithData++;
                const all = new Set(full);
                for (const k of mine) expect(all.has(k), `${rule} ${k}`).toBe(true);
                const allRows = new Set(rows(stateless, rule));
                for (const k of rows(plan, rule)) expect(allRows.has(k), `${rule} ${k}`).toBe(true);
              } else {
                seen.complete++;
                expect(mine, rule).toEqual(full);
                expect(rows(plan, rule), rule).toEqual(rows(stateless, rule));
              }
            }
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 16, seed: 4647 },
    );
    // the property met partial plans with rules of each kind
    expect(seen.plans).toBeGreaterThan(8);
    expect(seen.partialWithData).toBeGreaterThan(0);
    expect(seen.complete).toBeGreaterThan(0);
  }, 240_000);
});

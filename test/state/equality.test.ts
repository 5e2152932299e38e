/**
 * The contract of `--state` (docs/operating.md, "State between runs"): after any sequence of people's work (edits, steps
 * completed, aborts, new instances, deadlines set to come due), clock moves, edits of the rules (`when`, actions,
 * limits, names, modes, `select`, newly read fields, rules dropped and brought back) and our own writes written
 * through (with someone else changing some of those instances right after our write), a run with state plans exactly
 * what a stateless run plans at the same moment: changes, inputs, reports, conflicts, limits, exclusions, errors.
 * Random sequences from many seeds, against the sandbox over loopback HTTP, with a rule set using every kind of
 * selection filter.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { Prng } from "../../src/sandbox/prng.js";
import { startSandbox, type PeopleAction, type RunningSandbox } from "../../src/sandbox/index.js";
import { fixtureRules, fixtureText } from "../helpers/rules.js";
import { edit, editRules } from "./edits.js";
import { afterEachWrite, comparable, sendChanges, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;
const TEXT = fixtureText("state-equality");
const rules = fixtureRules("state-equality");

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KINDS: PeopleAction[] = [
  "edit-value",
  "edit-tags",
  "edit-priority",
  "complete-step",
  "abort",
  "start",
  "deadline-due",
];

/** One round between two runs: some people's work, then the clock moves (often a little, sometimes days). */
const round = fc.record({
  changes: fc.integer({ min: 0, max: 25 }),
  kinds: fc.option(fc.subarray(KINDS, { minLength: 1 }), { nil: undefined }),
  minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 60, max: 3 * 24 * 60 })),
  // work done after the clock moved too (changes at the very moment of the run)
  late: fc.integer({ min: 0, max: 5 }),
  // a pull request merged before this run
  edits: fc.option(fc.array(edit, { minLength: 1, maxLength: 3 }), { nil: undefined }),
  // this run's plan applied through the state: someone else changes this share of those instances right after our
  // write; `spread` puts each write at its own instant (else they share the pinned clock's)
  write: fc.option(fc.record({ interfere: fc.constantFrom(0, 0.2, 0.6), spread: fc.boolean() }), { nil: undefined }),
  // the service restored from the backup taken before the last round (its new instances gone, its updates and our
  // writes undone; the clock runs on), as after a restored database or a reset sandbox
  restore: fc.constantFrom(false, false, false, true),
});

/** Someone starts an instance of each workflow the rules read: a copy of one of its instances under a new id. */
function startOneEach(sb: RunningSandbox): void {
  for (const pid of [1042, 1043, 1044, 1045]) {
    const model = sb.store.list(pid)[0];
    if (!model) continue;
    const id = sb.store.nextId();
    sb.store.insert({
      ...model,
      id,
      name: `${model.name} (again)`,
      startedTime: sb.store.nowMs(),
      lastUpdatedTime: null,
      completedTime: null,
      abortedTime: null,
    });
  }
}

/** Someone else's change of an instance: a tag, the priority or the amount, as people make them in the product. */
function meddle(sb: RunningSandbox, id: number, pick: number): void {
  if (pick < 0.4) sb.store.update(id, (i) => void i.tags.push("late-edit"));
  else if (pick < 0.7) sb.store.update(id, (i) => void (i.priority = i.priority === "H" ? null : "H"));
  else sb.store.setValue(id, 50222, { inputValue: Math.round(pick * 300) });
}

describe("a run with state plans what a stateless run plans", () => {
  it("after random people's work, clock moves, rule edits and our own writes, some changed by others right after (many seeds)", async () => {
    let compared = 0;
    let withState = 0;
    let without = 0;
    let written = 0;
    let usedThrough = 0;
    let restored = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(round, { minLength: 2, maxLength: 5 }),
        async (seed, rounds) => {
          const sb: RunningSandbox = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          const random = Prng.fn(seed);
          try {
            const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
            let text = TEXT;
            let ruleSet = rules;
            const first = await statefulPlan(sb, ruleSet, sb.store.now(), settings);
            expect(comparable(first.plan)).toEqual(comparable((await statelessPlan(sb, ruleSet, sb.store.now())).plan));
            let backup = sb.store.backup();
            let lastRestored = false;
            for (const [n, r] of rounds.entries()) {
              // a backup older than what the last run saw (one restore after another would put back what it saw)
              const restoring: boolean = r.restore && n > 0 && !lastRestored;
              lastRestored = restoring;
              const taken = backup;
              backup = sb.store.backup();
              startOneEach(sb);
              sb.simulate({ seed: seed + n, changes: r.changes, ...(r.kinds ? { kinds: r.kinds } : {}) });
              sb.advanceClock(r.minutes * MINUTE);
              if (r.late > 0) sb.simulate({ seed: seed + 1000 + n, changes: r.late });
              if (restoring) {
                sb.store.restore(taken);
                restored++;
              }
              if (r.edits) ({ text, ruleSet } = editRules(text, TEXT, r.edits));
              const now = sb.store.now();
              const stateless = await statelessPlan(sb, ruleSet, now);
              const stateful = await statefulPlan(sb, ruleSet, now, settings, {
                explain: (c) => {
                  const m = /(\d+) records? of our own writes used/.exec(c.why);
                  if (m) usedThrough += Number(m[1]);
                },
                afterPlan: async (plan, run, c) => {
                  if (!r.write) return;
                  const write = r.write;
                  const sending = run.applying(
                    afterEachWrite(c, (id) => {
                      if (random() < write.interfere) meddle(sb, id, random());
                      if (write.spread) sb.advanceClock(1);
                    }),
                  );
                  written += await sendChanges(sending, plan);
                },
              });
              expect(comparable(stateful.plan), `seed ${seed}, after round ${n + 1} (${JSON.stringify(r)})`).toEqual(
                comparable(stateless.plan),
              );
              // a restore is noticed, in one warning; nothing else is ever taken for one
              expect(
                stateful.warnings.filter((w) => w.startsWith("state:")),
                `seed ${seed}, round ${n + 1}`,
              ).toEqual(
                restoring
                  ? [
                      expect.stringMatching(
                        /^state: the service went back since the last run \(.+\), as after a restored backup or a reset: the state is not used, everything is read afresh$/,
                      ),
                    ]
                  : [],
              );
              compared++;
              withState += stateful.requests;
              without += stateless.requests;
            }
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 12, seed: 24, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(24);
    expect(restored).toBeGreaterThan(2);
    // the state is used, not just carried: the runs with it asked for much less, rule edits and writes included
    expect(withState).toBeLessThan(without / 2);
    // our writes were sent and their answers served later runs
    expect(written).toBeGreaterThan(10);
    expect(usedThrough).toBeGreaterThan(0);
  }, 300_000);

  it("a rule edit invalidates nothing: an edited `when` costs an unchanged run, an edited `select` only its own listing", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 5, now: START });
    const dir = await tempDir();
    cleanups.push(
      () => sb.close(),
      () => dir.remove(),
    );
    const settings = { dir: dir.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
    await statefulPlan(sb, rules, sb.store.now(), settings);
    sb.advanceClock(20 * MINUTE);
    const unchanged = await statefulPlan(sb, rules, sb.store.now(), settings);

    // every rule's `when` threshold, template, limit, name and description edited (reading what it read before):
    // the same requests as an unchanged run
    sb.advanceClock(20 * MINUTE);
    const all = rules.rules.flatMap((r, i) => [
      ...(/\d/.test(r.when?.source ?? "") ? [{ kind: "when" as const, n: i }] : []),
      ...(r.actions.some((a) => a.kind !== "report") ? [{ kind: "action" as const, n: i }] : []),
      ...(["limits", "name", "description"] as const).map((kind) => ({ kind, n: i })),
    ]);
    expect(all.length).toBeGreaterThan(3 * rules.rules.length);
    const edited = editRules(TEXT, TEXT, all).ruleSet;
    let run = await statefulPlan(sb, edited, sb.store.now(), settings);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, edited, sb.store.now())).plan));
    expect(run.warnings).toEqual([]);
    expect(run.requests).toBeLessThanOrEqual(unchanged.requests + 2);

    // one rule's `select` edited: what an unchanged run costs, plus that rule's listing
    sb.advanceClock(20 * MINUTE);
    const selected = editRules(TEXT, TEXT, [{ kind: "select", n: 4 }]); // due-soon: priority H added
    expect(selected.text).toMatch(/priority: H/);
    const alone = await statelessPlan(
      sb,
      { ...selected.ruleSet, rules: selected.ruleSet.rules.filter((r) => r.name === "due-soon") },
      sb.store.now(),
    );
    run = await statefulPlan(sb, selected.ruleSet, sb.store.now(), settings);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, selected.ruleSet, sb.store.now())).plan));
    expect(run.warnings).toEqual([]);
    expect(run.requests).toBeLessThanOrEqual(unchanged.requests + 2 + alone.requests);
  }, 120_000);

  it("a structure probe, an expired resync and --full-refresh: still equal (with one warning each)", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 5, now: START });
    const dir = await tempDir();
    cleanups.push(
      () => sb.close(),
      () => dir.remove(),
    );
    const settings = { dir: dir.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
    await statefulPlan(sb, rules, sb.store.now(), settings);

    // two days later: past --resync-after, every workflow is read in full again, one warning
    sb.simulate({ seed: 1, changes: 10 });
    sb.advanceClock(2 * 24 * 60 * MINUTE);
    let run = await statefulPlan(sb, rules, sb.store.now(), settings);
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toMatch(/--resync-after/);
    expect(run.counts?.fromState).toBe(0);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));

    // --full-refresh: nothing from the state, same plan, no warning
    run = await statefulPlan(sb, rules, sb.store.now(), { ...settings, fullRefresh: true });
    expect(run.counts?.fromState).toBe(0);
    expect(run.warnings).toEqual([]);
    // and the next run uses what it wrote
    sb.advanceClock(5 * MINUTE);
    run = await statefulPlan(sb, rules, sb.store.now(), settings);
    expect(run.counts?.fromState ?? 0).toBeGreaterThan(50);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));
  }, 120_000);

  it("a run that fails to read part of the data leaves the previous state as it was; the next run is still right", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 8, now: START });
    const dir = await tempDir();
    cleanups.push(
      () => sb.close(),
      () => dir.remove(),
    );
    const settings = { dir: dir.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
    await statefulPlan(sb, rules, sb.store.now(), settings);
    const file = join(dir.dir, "state.jsonl");
    const before = await readFile(file, "utf8");
    sb.simulate({ seed: 3, changes: 20 });
    sb.advanceClock(10 * MINUTE);
    sb.setFaults({ failRate: 1 });
    const failed = await statefulPlan(sb, rules, sb.store.now(), settings, {
      client: { maxAttempts: 1, retryBaseMs: 1 },
    });
    sb.setFaults({ failRate: 0 });
    expect(failed.plan.errors.some((e) => e.code === "api" || e.code === "resolve")).toBe(true);
    expect(await readFile(file, "utf8")).toBe(before);
    expect(existsSync(join(dir.dir, "state.lock"))).toBe(false);
    const run = await statefulPlan(sb, rules, sb.store.now(), settings);
    expect(run.counts?.fromState ?? 0).toBeGreaterThan(50);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));
  }, 120_000);
});

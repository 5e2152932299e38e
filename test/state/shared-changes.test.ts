/**
 * A watcher's poll asks the changes listing the next cycle's state would ask (src/watch/poll.ts, pollWorkflow), and
 * the state takes it as its own instead of listing again (src/state/known.ts, since and changedIds). The contract is
 * still equality with a stateless run (as test/state/equality.test.ts, over many seeds): a plan with the poll's
 * listing plans what a stateless plan plans; a person's change between the poll and the plan (which that plan may
 * not see, as a run does not see a change made after its own changes listing) is seen by the next run, not lost.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { Prng } from "../../src/sandbox/prng.js";
import { rulesFromYaml } from "../helpers/rules.js";
import {
  client,
  comparable,
  sendChanges,
  statefulPlan,
  statelessPlan,
  tempDir,
  BUSY_RULES,
  watcherPolls,
} from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;
const WORKFLOWS = [1042, 1044];

const RULES = `version: 1
rules:
${BUSY_RULES}`;

/** A person makes a waiting claim match the approval rule. */
function makeMatch(sb: RunningSandbox, random: () => number): void {
  const claims = sb.store
    .list(1042)
    .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111))
    .map((i) => i.id);
  const id = claims[Math.floor(random() * claims.length)];
  if (id === undefined) return;
  sb.store.update(id, (i) => {
    i.values.set(50222, { inputValue: 10 + Math.floor(random() * 80) });
    i.values.set(50223, { inputValue: { radioItemSelected: "EUR" } });
    if (!i.tags.includes("expenses")) i.tags.push("expenses");
  });
}

describe("the changes listing of a watcher's poll, taken by the state as its own", () => {
  it("plans what a stateless run plans; a change between the poll and the plan is seen by the next run (many seeds)", async () => {
    const rules: RuleSet = await rulesFromYaml(RULES);
    let shared = 0;
    let listedAgain = 0;
    let compared = 0;
    let afterLate = 0;
    let polledRecords = 0;
    let decidedSlices = 0;
    const round = fc.record({
      changes: fc.integer({ min: 0, max: 4 }),
      matches: fc.integer({ min: 0, max: 2 }),
      minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })),
      // someone changes instances after the poll, before the plan
      late: fc.integer({ min: 0, max: 2 }),
      // and the plan starts this long after the poll (beyond the state's margin for late commits)
      lateGapS: fc.constantFrom(0, 15, 90),
      write: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(round, { minLength: 3, maxLength: 6 }),
        async (seed, rounds) => {
          const sb = await startSandbox({ port: 0, instances: 250, seed, now: START });
          const dir = await tempDir();
          const poller = client(sb);
          const random = Prng.fn(seed);
          try {
            const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
            let from = (await statefulPlan(sb, rules, sb.store.now(), settings, { recordSeen: true })).changesFrom;
            expect(from.size).toBe(WORKFLOWS.length);
            const polls = await watcherPolls(poller, WORKFLOWS);
            let lateBefore = false;
            for (const [n, r] of rounds.entries()) {
              sb.simulate({ seed: seed + n, changes: r.changes, kinds: ["edit-value", "edit-tags", "complete-step"] });
              for (let k = 0; k < r.matches; k++) makeMatch(sb, random);
              sb.advanceClock(r.minutes * MINUTE);
              // the poll, as the watcher's loop asks it after a cycle
              const listed = await polls.poll(from);
              if (r.late > 0) {
                sb.simulate({ seed: seed + 1000 + n, changes: r.late, kinds: ["edit-value", "edit-tags"] });
                makeMatch(sb, random);
                sb.advanceClock(r.lateGapS * 1000);
              }
              const now = sb.store.now();
              const stateless = await statelessPlan(sb, rules, now, { recordSeen: true });
              sb.clearRequests();
              const stateful = await statefulPlan(sb, rules, now, settings, {
                recordSeen: true,
                listed,
                explain: (c) => {
                  if (c.subject.startsWith("changed instances of")) decidedSlices++;
                  if (c.subject !== "changes since the last run") return;
                  if (c.choice === "state" && c.requests === 0) shared++;
                  else listedAgain++;
                },
                afterPlan: async (plan, run, c) => {
                  if (r.write) await sendChanges(run.applying(c), plan);
                },
              });
              // a change after the poll may be missing from this plan (as from a run that listed changes before
              // it); never from the next one
              if (r.late === 0) {
                expect(comparable(stateful.plan), `seed ${seed}, round ${n + 1} (${JSON.stringify(r)})`).toEqual(
                  comparable(stateless.plan),
                );
                compared++;
                if (lateBefore) afterLate++;
              }
              expect(stateful.warnings).toEqual([]);
              // the records the poll read with values are this run's reads: the plan reads none of them again
              const read = new Set(
                sb
                  .requests()
                  .filter(
                    (q) =>
                      q.method === "GET" && q.query.inject_values === "true" && q.query.steps_time_frame !== "true",
                  )
                  .map((q) => q.path),
              );
              for (const l of listed.values())
                for (const rec of l.records ?? []) {
                  expect(read.has(`/api/instances/${rec.id}/`), `instance ${rec.id} read again`).toBe(false);
                  polledRecords++;
                }
              lateBefore = r.late > 0;
              from = stateful.changesFrom;
            }
          } finally {
            await poller.close();
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 10, seed: 4646, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(15);
    expect(afterLate).toBeGreaterThan(2);
    // the poll's listing was taken, not only allowed
    expect(shared).toBeGreaterThan(listedAgain);
    expect(polledRecords).toBeGreaterThan(5);
    // selections' changed slices decided from the poll's elements and the records read (src/state/known.ts)
    expect(decidedSlices).toBeGreaterThan(5);
  }, 180_000);
});

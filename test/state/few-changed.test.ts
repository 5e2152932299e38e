/**
 * A run that handles a few changed instances costs what reading them costs (docs/performance.md, "A busy tenant"):
 * the state takes the field values of a few changed instances from their records read with values (src/state/values.ts),
 * asks a list it built once a run, decides who left a moved `last_updated_time_after` bound from the records it kept
 * and answers the structure probe with the census's page (src/state/known.ts). The contract stays equality with a
 * stateless run (as test/state/equality.test.ts, here with few changes and many fields a rule reads, over many
 * seeds); and the requests of such a run are bounded by the changes, not by the tenant (counted in the sandbox's
 * request log).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { Prng } from "../../src/sandbox/prng.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { comparable, sendChanges, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;

/** Rules reading many fields of few instances each: approvals on four fields, a flag on three, a report on two. */
const MANY_FIELDS = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
      category: { step: 20110, action: 50221 }
      description: { step: 20110, action: 50220 }
    select: { status: [running], active_step_id: 20111, tags: [expenses] }
    when: fields.amount < 100 and fields.currency = "EUR" and fields.category != "Equipment" and $exists(fields.description)
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "Approved" } } ] }
  - name: flag-large
    workflow: 1044
    fields:
      quantity: { step: 20130, action: 50261 }
      price: { step: 20130, action: 50262 }
      note: { step: 20131, action: 50264 }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity * fields.price > 5000 and $not($exists(fields.note))
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "Large order" } } ] }
  - name: report-recent
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      comment: { step: 20111, action: 50230 }
    select: { status: [running], last_updated_time_after: -PT30M }
    actions:
      - report: { title: Recently updated claims, group_by: status, columns: [id, fields.amount, fields.comment] }
`;

/** A person makes a waiting claim match the approval rule: four fields and a tag. */
function makeMatch(sb: RunningSandbox, id: number, amount: number): void {
  sb.store.update(id, (i) => {
    i.values.set(50222, { inputValue: amount });
    i.values.set(50223, { inputValue: { radioItemSelected: "EUR" } });
    i.values.set(50221, { inputValue: { radioItemSelected: "Travel" } });
    i.values.set(50220, { inputValue: "Train to Lyon" });
    if (!i.tags.includes("expenses")) i.tags.push("expenses");
  });
}

/** Running claims waiting at manager approval, in id order. */
function waitingClaims(sb: RunningSandbox): number[] {
  return sb.store
    .list(1042)
    .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111))
    .map((i) => i.id);
}

async function requestsOf(sb: RunningSandbox, run: () => Promise<unknown>): Promise<number> {
  sb.clearRequests();
  await run();
  return sb.requests().length;
}

describe("a run that handles a few changed instances", () => {
  it("plans what a stateless run plans, its shortcuts taken (few changes, many fields, many seeds)", async () => {
    const rules: RuleSet = await rulesFromYaml(MANY_FIELDS);
    let byRecords = 0;
    let decided = 0;
    let compared = 0;
    const round = fc.record({
      changes: fc.integer({ min: 0, max: 3 }),
      matches: fc.integer({ min: 0, max: 2 }),
      minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 })),
      write: fc.boolean(),
      // planned as apply plans (what it saw of each instance it changes: records read early, with values)
      seen: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(round, { minLength: 3, maxLength: 6 }),
        async (seed, rounds) => {
          const sb = await startSandbox({ port: 0, instances: 250, seed, now: START });
          const dir = await tempDir();
          const random = Prng.fn(seed);
          try {
            const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
            await statefulPlan(sb, rules, sb.store.now(), settings);
            for (const [n, r] of rounds.entries()) {
              sb.simulate({ seed: seed + n, changes: r.changes, kinds: ["edit-value", "edit-tags", "complete-step"] });
              const claims = waitingClaims(sb);
              for (let k = 0; k < r.matches && claims.length > 0; k++) {
                const [id] = claims.splice(Math.floor(random() * claims.length), 1);
                if (id !== undefined) makeMatch(sb, id, 10 + Math.floor(random() * 80));
              }
              sb.advanceClock(r.minutes * MINUTE);
              const now = sb.store.now();
              const stateless = await statelessPlan(sb, rules, now, { recordSeen: r.seen });
              const stateful = await statefulPlan(sb, rules, now, settings, {
                recordSeen: r.seen,
                explain: (c) => {
                  if (/taken from their records read with values/.test(c.why)) byRecords++;
                  if (/who left told by the records kept/.test(c.why)) decided++;
                },
                afterPlan: async (plan, run, c) => {
                  if (r.write) await sendChanges(run.applying(c), plan);
                },
              });
              expect(comparable(stateful.plan), `seed ${seed}, round ${n + 1} (${JSON.stringify(r)})`).toEqual(
                comparable(stateless.plan),
              );
              expect(stateful.warnings).toEqual([]);
              compared++;
            }
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 10, seed: 46, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(30);
    // the shortcuts were taken, not only allowed
    expect(byRecords).toBeGreaterThan(3);
    expect(decided).toBeGreaterThan(3);
  }, 180_000);

  it("asks a number of requests bounded by the changed instances, whatever the tenant's size", async () => {
    const rules: RuleSet = await rulesFromYaml(MANY_FIELDS);
    const costs = new Map<string, number>();
    for (const instances of [400, 4000]) {
      const sb = await startSandbox({ port: 0, instances, seed: 7, now: START });
      const dir = await tempDir();
      try {
        const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
        await statefulPlan(sb, rules, sb.store.now(), settings);
        for (const k of [0, 1, 3]) {
          const claims = waitingClaims(sb);
          for (let j = 0; j < k; j++) makeMatch(sb, claims[(j * 7) % claims.length] as number, 20 + j);
          // half a minute later, as a busy watcher's cycles come
          sb.advanceClock(MINUTE / 2);
          const now = sb.store.now();
          const asked = await requestsOf(sb, () => statefulPlan(sb, rules, now, settings));
          costs.set(`${instances}:${k}`, asked);
        }
      } finally {
        await sb.close();
        await dir.remove();
      }
    }
    // the tenant's size adds nothing
    for (const k of [0, 1, 3]) expect(costs.get(`4000:${k}`), `k = ${k}`).toBe(costs.get(`400:${k}`));
    const none = costs.get("400:0") as number;
    // with nothing changed: the census, per workflow its changes listing, per selection nothing
    expect(none).toBeLessThanOrEqual(2 * 2 + 2);
    // each changed claim costs its record (all four fields at once) and its share of the selections' changed slices
    // (one per selection, shared by all the instances), never a page per field
    const selections = 4;
    for (const k of [1, 3]) expect(costs.get(`400:${k}`), `k = ${k}`).toBeLessThanOrEqual(none + 2 * k + selections);
  }, 120_000);

  it("reads a changed instance once when the plan also records what it saw of it (as apply and the watcher plan)", async () => {
    const rules: RuleSet = await rulesFromYaml(MANY_FIELDS);
    const sb = await startSandbox({ port: 0, instances: 400, seed: 11, now: START });
    const dir = await tempDir();
    try {
      const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
      await statefulPlan(sb, rules, sb.store.now(), settings, { recordSeen: true });
      for (const k of [1, 3]) {
        const claims = waitingClaims(sb);
        const made = claims.filter((_, j) => j % 5 === 0).slice(0, k);
        made.forEach((id, j) => makeMatch(sb, id, 20 + j));
        sb.advanceClock(MINUTE / 2);
        const now = sb.store.now();
        sb.clearRequests();
        const stateful = await statefulPlan(sb, rules, now, settings, { recordSeen: true });
        const asked = sb.requests();
        const stateless = await statelessPlan(sb, rules, now, { recordSeen: true });
        expect(comparable(stateful.plan), `k = ${k}`).toEqual(comparable(stateless.plan));
        // each matched claim is planned, and what the plan saw of it is its record's time (the early read)
        for (const id of made) {
          const change = stateful.plan.changes.find((c) => c.instance_id === id);
          const saw = change?.precondition.last_updated_time;
          expect(saw === undefined ? undefined : Date.parse(saw), `claim ${id}`).toBe(
            sb.store.get(id)?.lastUpdatedTime,
          );
        }
        // the early read brought the values: no form-field page, and no record read twice
        expect(asked.filter((r) => /\/actions\/\d+\/$/.test(r.path))).toEqual([]);
        const reads = asked
          .filter((r) => r.method === "GET" && /^\/api\/instances\/\d+\/$/.test(r.path))
          .map((r) => r.path);
        expect(reads.length, `k = ${k}`).toBeGreaterThanOrEqual(k);
        expect(new Set(reads).size, `k = ${k}: ${reads.join(" ")}`).toBe(reads.length);
      }
    } finally {
      await sb.close();
      await dir.remove();
    }
  }, 60_000);
});

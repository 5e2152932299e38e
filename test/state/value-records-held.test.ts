/**
 * The records with values a run holds to answer again (src/state/value-records.ts) are held compact once their read
 * came back: every answer must be the record as read (a cache is never the truth), over random records of every
 * shape a snapshot may take, and over the sandbox's own records; and a first sync that asks records twice makes the
 * requests and the plan of a stateless run.
 */
import { describe, expect, it } from "vitest";
import type { InstanceRecord } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { Prng } from "../../src/sandbox/prng.js";
import type { StateClient } from "../../src/state/client.js";
import { ValueRecords } from "../../src/state/value-records.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { client, comparable, openTestRun, statelessPlan, tempDir } from "./helpers.js";

function pick<T>(r: Prng, xs: readonly T[]): T {
  return xs[r.int(0, xs.length - 1)] as T;
}

/** A JSON value as a form's input may hold (nested objects, arrays, unicode, numbers of every kind). */
function value(r: Prng, depth = 0): unknown {
  const k = r.int(0, depth > 2 ? 4 : 7);
  if (k === 0) return null;
  if (k === 1) return r.next() < 0.5;
  if (k === 2) return pick(r, [0, -1, 1e21, 0.1, 38.53, -0.5, 2 ** 53 - 1]);
  if (k === 3) return pick(r, ["", "OK", "Zürich — 東京", '"quoted" \\ back', "line\nbreak"]);
  if (k === 4) return { inputValue: pick(r, ["EUR", 12, null]) };
  if (k === 5) return Array.from({ length: r.int(0, 3) }, () => value(r, depth + 1));
  return Object.fromEntries(
    Array.from({ length: r.int(0, 3) }, (_, i) => [`k${i}${r.int(0, 9)}`, value(r, depth + 1)]),
  );
}

function action(r: Prng, j: number): unknown {
  if (r.next() < 0.05) return pick(r, [null, "odd", 7]);
  const a: Record<string, unknown> = { id: 50_000 + j, name: `Field ${j}`, type: pick(r, ["text", "number", "radio"]) };
  if (r.next() < 0.8) a.settings = { label: `Field ${j}`, required: r.next() < 0.5 };
  if (r.next() < 0.6) a.input_object = r.next() < 0.1 ? null : value(r);
  if (r.next() < 0.2) a.extra = value(r);
  return a;
}

function step(r: Prng, i: number): unknown {
  if (r.next() < 0.05) return pick(r, [null, 3, "step"]);
  const s: Record<string, unknown> = { id: 20_000 + i, name: `Step ${i}`, position: i + 1, type: "form" };
  if (r.next() < 0.5) s.completed_time = r.next() < 0.3 ? null : "2026-06-01T10:00:00.000Z";
  if (r.next() < 0.9)
    s.actions = r.next() < 0.05 ? "none" : Array.from({ length: r.int(0, 4) }, (_, j) => action(r, i * 10 + j));
  return s;
}

/** A record of any shape the service may give: snapshot absent, null, without steps, or steps of any make. */
function record(r: Prng, id: number): InstanceRecord {
  const rec: Record<string, unknown> = {
    process: "http://127.0.0.1/api/processes/1042/",
    id,
    name: `Claim #${id}`,
    status: pick(r, ["running", "completed", "aborted"]),
    started_time: "2026-05-01T00:00:00.000Z",
    last_updated_time: "2026-06-01T00:00:00.000Z",
    tags: r.next() < 0.5 ? ["expenses"] : [],
    priority: pick(r, ["H", "V", null]),
  };
  const shape = r.int(0, 9);
  if (shape === 0) return rec as InstanceRecord;
  if (shape === 1) rec.process_snapshot = null;
  else if (shape === 2) rec.process_snapshot = { id: 1042, name: "Expense claim" };
  else if (shape === 3) rec.process_snapshot = { id: 1042, steps: "many" };
  else
    rec.process_snapshot = {
      id: 1042,
      name: pick(r, ["Expense claim", "Budget"]),
      steps: Array.from({ length: r.int(0, 4) }, (_, i) => step(r, i)),
    };
  if (r.next() < 0.3) rec.extra = value(r);
  return rec as InstanceRecord;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("records with values held compact", () => {
  it("answers every held record as it was read, a new object each time (random records, many seeds)", async () => {
    for (let seed = 1; seed <= 150; seed++) {
      const r = new Prng(seed);
      const skeletons = new Map<string, unknown>();
      const held = new ValueRecords(skeletons);
      const originals = new Map<number, InstanceRecord>();
      for (let id = 1; id <= 8; id++) {
        const rec = record(r, id);
        // what the caller got is the read itself: kept apart from what is held
        originals.set(id, structuredClone(rec));
        held.set(id, Promise.resolve(rec));
      }
      // a read still in flight is answered by its own promise
      let resolve: (v: InstanceRecord) => void = () => undefined;
      held.set(99, new Promise<InstanceRecord>((res) => (resolve = res)));
      expect(held.get(99)).toBeInstanceOf(Promise);
      await tick();
      expect(held.size).toBe(9);
      for (const [id, rec] of originals) {
        const a = await held.get(id);
        const b = await held.get(id);
        expect(a, `seed ${seed}, record ${id}`).toEqual(rec);
        expect(a).not.toBe(b);
        // a caller changing its answer changes nobody else's
        (a as { name?: string }).name = "changed";
        expect(await held.get(id)).toEqual(rec);
      }
      const late = record(r, 99);
      resolve(late);
      await tick();
      expect(await held.get(99)).toEqual(late);
      // dropped: not answered, and a read replaced in flight is not held over its successor
      expect(held.delete(3)).toBe(true);
      expect(held.get(3)).toBeUndefined();
      expect(held.has(3)).toBe(false);
      const first = record(r, 5);
      const second = record(new Prng(seed + 10_000), 5);
      let late5: (v: InstanceRecord) => void = () => undefined;
      held.set(5, new Promise<InstanceRecord>((res) => (late5 = res)));
      held.set(5, Promise.resolve(second));
      late5(first);
      await tick();
      expect(await held.get(5)).toEqual(second);
    }
  });

  it("holds the sandbox's records as read, and a first sync makes a stateless run's requests and plan", async () => {
    const START = new Date("2026-06-15T12:00:00.000Z");
    const sb = await startSandbox({ port: 0, instances: 400, seed: 11, now: START });
    const dir = await tempDir();
    try {
      const c = client(sb);
      try {
        const held = new ValueRecords(new Map());
        const ids = sb.store.ids().slice(0, 60);
        const reads = new Map<number, InstanceRecord>();
        for (const id of ids) {
          const rec = await c.getInstance(id, { injectValues: true });
          reads.set(id, structuredClone(rec));
          held.set(id, Promise.resolve(rec));
        }
        await tick();
        for (const [id, rec] of reads) expect(await held.get(id)).toEqual(rec);
      } finally {
        await c.close();
      }

      // a changing rule reading fields reads the record of each instance it may change (with values) and a report
      // over the same instances reads them too: the second ask is answered by what the run holds
      const rules = await rulesFromYaml(`version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 100
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50231, value: { date: "{{ $now() }}" } } ] }
  - name: overdue
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: running, deadline_before: now }
    actions: [ { report: { group_by: tags, columns: [id, name, deadline, fields.amount] } } ]
`);
      const now = sb.store.now();
      const stateless = await statelessPlan(sb, rules, now);
      const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false };
      const run = await openTestRun(settings, sb.baseUrl, now, rules.rules);
      const inner = client(sb);
      try {
        const wrapped = run.wrap(inner);
        const plan = await runPlan({ client: wrapped, ruleSet: rules, now, optOutTag: "no-automation" });
        // the run held records to answer again (else this test proves nothing)
        expect((wrapped as StateClient).valueRecords.size).toBeGreaterThan(0);
        expect(comparable(plan)).toEqual(comparable(stateless.plan));
        expect(inner.stats().total).toBe(stateless.requests);
      } finally {
        await inner.close();
        await run.release();
      }
    } finally {
      await sb.close();
      await dir.remove();
    }
  }, 60_000);
});

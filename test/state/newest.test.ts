/**
 * The structure probe's question (the newest started instance of a workflow, `ordering=-started_time`, one element)
 * answered from the last run although instances of the workflow changed (src/state/known.ts, newestHolds): when each
 * changed instance started before changes are listed from (its record, read by the watcher's poll or kept, says
 * when) and the newest is not among them. The contract is equality: the answer the state gives is the service's at
 * the same moment (people starting instances among other work, over many seeds), and so is the plan, the
 * selections' changed slices decided from the same records (src/state/known.ts, changedByRecords) included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { ApiClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import type { RuleSet } from "../../src/rules/types.js";
import { readInFull, type ListedChanges, type StateSettings } from "../../src/state/index.js";
import { CENSUS_QUERY } from "../../src/state/back.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { client, comparable, statelessPlan, openTestRun, tempDir, BUSY_RULES, watcherPolls } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;
const WORKFLOWS = [1042, 1044, 1045];

const RULES = `version: 1
rules:
${BUSY_RULES}  - name: fast-track-access
    workflow: 1045
    select: { status: [running], tags: [fast-track] }
    actions:
      - report: { title: Fast-tracked access, group_by: status, columns: [id, name] }
  - name: recent-purchases
    workflow: 1044
    select: { status: [running], last_updated_time_after: -PT2M }
    actions:
      - report: { title: Purchases updated lately, group_by: status, columns: [id, name] }
`;

type Probe = { count: number | null; results: unknown[]; more: boolean };

async function probe(c: ApiClient, pid: number): Promise<Probe> {
  for await (const page of c.instancePages(pid, { ...CENSUS_QUERY }))
    return { count: page.count, results: page.results, more: page.next !== null };
  return { count: null, results: [], more: false };
}

/**
 * A run with state as `watch` runs it (the poll's listing handed over): before the plan, the probe's question of
 * every workflow asked through the state and of the service, at the same moment; then the plan, and the commit.
 */
async function run(
  sb: RunningSandbox,
  rules: RuleSet,
  now: Date,
  settings: StateSettings,
  listed: ListedChanges,
  onHeld: () => void,
): Promise<{
  answers: Array<{ pid: number; state: Probe; service: Probe }>;
  plan: unknown;
  warnings: string[];
  changesFrom: ReadonlyMap<number, string>;
}> {
  const c = client(sb);
  const warnings: string[] = [];
  try {
    const state = await openTestRun(settings, c.baseUrl, now, rules.rules, {
      warn: (m) => warnings.push(m),
      explain: (e) => {
        if (e.subject.startsWith("the newest started instance")) onHeld();
      },
      ...(listed.size > 0 ? { listed } : {}),
    });
    try {
      const wrapped = state.wrap(c);
      const answers = [];
      for (const pid of WORKFLOWS)
        answers.push({ pid, state: await probe(wrapped, pid), service: await probe(c, pid) });
      const plan = await runPlan({
        client: wrapped,
        ruleSet: rules,
        now,
        optOutTag: "no-automation",
        recordSeen: true,
      });
      if (readInFull(plan)) await state.commit();
      return { answers, plan: comparable(plan), warnings, changesFrom: state.changesFrom() };
    } finally {
      await state.release();
    }
  } finally {
    await c.close();
  }
}

describe("the structure probe's answer kept while other instances changed", () => {
  it("is the service's answer, and the plan a stateless plan, as people work and start instances (many seeds)", async () => {
    const rules = await rulesFromYaml(RULES);
    let held = 0;
    let compared = 0;
    let newer = 0;
    const round = fc.record({
      changes: fc.integer({ min: 0, max: 2 }),
      // people start instances: the newest started changes, which the state's answer must not hide
      starts: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })),
      // a person renames the newest started instance of a workflow: the answer's element changed
      touchNewest: fc.boolean(),
      minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(round, { minLength: 4, maxLength: 8 }),
        async (seed, rounds) => {
          const sb = await startSandbox({ port: 0, instances: 250, seed, now: START });
          const dir = await tempDir();
          const poller = client(sb);
          try {
            const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
            // per workflow, from when the next run lists changes (the watcher's first poll lists from there)
            let from = (await run(sb, rules, sb.store.now(), settings, new Map(), () => undefined)).changesFrom;
            const polls = await watcherPolls(poller, WORKFLOWS);
            for (const [n, r] of rounds.entries()) {
              const before = new Map(WORKFLOWS.map((pid) => [pid, sb.store.list(pid).length]));
              sb.simulate({ seed: seed + n, changes: r.changes, kinds: ["edit-value", "edit-tags", "complete-step"] });
              if (r.touchNewest) {
                const pid = WORKFLOWS[1 + (n % 2)] as number;
                const newest = sb.store.list(pid).reduce((a, b) => (b.startedTime > a.startedTime ? b : a));
                sb.advanceClock(1000);
                // its name is in its list element: the answer differs once it changed
                sb.store.update(newest.id, (i) => void (i.name = `${i.name} (renamed)`));
              }
              // a second later, the starts: the newest updates, which the poll reads
              sb.advanceClock(1000);
              sb.simulate({ seed: seed + 500 + n, changes: r.starts, kinds: ["start"] });
              // started in a workflow the census does not answer (the census's is the largest)
              for (const pid of WORKFLOWS.slice(1)) if (sb.store.list(pid).length !== before.get(pid)) newer++;
              sb.advanceClock(r.minutes * MINUTE);
              const listed = await polls.poll(from);
              const now = sb.store.now();
              const stateless = await statelessPlan(sb, rules, now, { recordSeen: true });
              const stateful = await run(sb, rules, now, settings, listed, () => held++);
              const at = `seed ${seed}, round ${n + 1} (${JSON.stringify(r)})`;
              for (const a of stateful.answers) expect(a.state, `${at}, workflow ${a.pid}`).toEqual(a.service);
              expect(stateful.plan, at).toEqual(comparable(stateless.plan));
              expect(stateful.warnings).toEqual([]);
              from = stateful.changesFrom;
              compared++;
            }
          } finally {
            await poller.close();
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 10, seed: 4647, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(40);
    // the shortcut was taken, and instances started under it (which it must not hide)
    expect(held).toBeGreaterThan(8);
    expect(newer).toBeGreaterThan(3);
  }, 180_000);
});

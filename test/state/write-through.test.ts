/**
 * Write-through (docs/operating.md, "State between runs"): the answers of our own complete_step/save_step replace the cached records,
 * the ids a bulk abort returned are kept as aborted, and the run after applying does not read those instances one by
 * one again: one listing per write instant shows which still have exactly the last_updated_time our write left
 * (the request log has no read of them), and the one someone else changed right after our write is read again.
 * And the lookback: a run more than two minutes after the last change lists changes from when the last run looked,
 * by the service's clock, so a quiet tenant costs its polls; without a Date header, from our clock less two minutes.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/commands/apply.js";
import { planCommand } from "../../src/commands/plan.js";
import { captureIO, connection, writeRules } from "../apply/helpers.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { StateChoice } from "../../src/state/index.js";
import { rulesFromYaml } from "../helpers/rules.js";
import type { RuleSet } from "../../src/rules/types.js";
import type { Plan } from "../../src/plan/types.js";
import { afterEachWrite, comparable, sendChanges, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;

/** Approvals that complete a step with a value, and a report that reads the records of the same instances. */
const YAML = `
version: 1
rules:
  - name: approve
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 250
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "ok by rule" } } ] }
  - name: all-running
    workflow: 1042
    select: { status: [running] }
    actions: [ { report: { group_by: priority, columns: [id, name, deadline] } } ]
  - name: stale
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P40D }
    actions: [ abort ]
`;

let ruleSet: RuleSet;
const dirs: Array<{ remove(): Promise<void> }> = [];
beforeAll(async () => {
  ruleSet = await rulesFromYaml(YAML);
});
afterAll(async () => {
  for (const d of dirs) await d.remove();
});

async function stateDir() {
  const d = await tempDir();
  dirs.push(d);
  return { dir: d.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
}

const GET_RECORD = /^\/api\/instances\/(\d+)\/$/;

describe("write-through", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 400, seed: 12, now: START });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("the next run reads none of the instances it changed, but the one someone else changed right after our write", async () => {
    const settings = await stateDir();
    let completed: number[] = [];
    let aborted: number[] = [];
    let meddled: number | undefined;
    const first = await statefulPlan(sb, ruleSet, sb.store.now(), settings, {
      afterPlan: async (plan, run, c) => {
        completed = plan.changes.filter((ch) => ch.rule === "approve").map((ch) => ch.instance_id);
        aborted = plan.changes.filter((ch) => ch.rule === "stale").map((ch) => ch.instance_id);
        // someone tags the second instance we complete, right after our write
        const sending = run.applying(
          afterEachWrite(
            c,
            (id) =>
              id === completed[1] &&
              (meddled = id) !== undefined &&
              void sb.store.update(id, (i) => void i.tags.push("late-edit")),
          ),
        );
        await sendChanges(sending, plan);
      },
    });
    expect(first.plan.errors).toEqual([]);
    expect(completed.length).toBeGreaterThan(5);
    expect(aborted.length).toBeGreaterThan(0);
    expect(meddled).toBe(completed[1]);

    sb.advanceClock(5 * MINUTE);
    sb.clearRequests();
    const explained: StateChoice[] = [];
    const next = await statefulPlan(sb, ruleSet, sb.store.now(), settings, { explain: (c) => explained.push(c) });
    const reads = new Set(
      sb
        .requests()
        .flatMap((r) => (r.method === "GET" ? [Number(GET_RECORD.exec(r.path)?.[1] ?? NaN)] : []))
        .filter((n) => !Number.isNaN(n)),
    );
    // the applied instances that still run are in the report, which reads records: ours came from our writes
    const ours = completed.filter((id) => id !== meddled);
    expect(ours.filter((id) => reads.has(id))).toEqual([]);
    expect(aborted.filter((id) => reads.has(id))).toEqual([]);
    expect(reads.has(meddled ?? 0)).toBe(true);
    // one listing of the write instant told which still hold
    const window = sb
      .requests()
      .filter(
        (r) =>
          r.query.last_updated_time_after !== undefined &&
          r.query.last_updated_time_after === r.query.last_updated_time_before,
      );
    expect(window).toHaveLength(1);
    expect(explained.map((c) => c.why).join("\n")).toMatch(
      new RegExp(`${ours.length} records of our own writes used \\(1 listing showed them unchanged since\\)`),
    );
    expect(explained.find((c) => c.subject === "changes since the last run" && c.workflow_id === 1042)?.why).toMatch(
      new RegExp(`${completed.length} of them by this flowrules' own writes`),
    );
    expect(comparable(next.plan)).toEqual(comparable((await statelessPlan(sb, ruleSet, sb.store.now())).plan));
  }, 60_000);

  it("each write at its own instant: read again, not listed (one request either way); still equal", async () => {
    const settings = await stateDir();
    // people lower six claims under the approval threshold (the test above approved the others)
    const waiting = sb.store
      .list(1042)
      .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111));
    for (const i of waiting.slice(0, 6)) sb.store.setValue(i.id, 50222, { inputValue: 10 });
    let completed: number[] = [];
    await statefulPlan(sb, ruleSet, sb.store.now(), settings, {
      afterPlan: async (plan, run, c) => {
        completed = plan.changes.filter((ch) => ch.rule === "approve").map((ch) => ch.instance_id);
        // 5 ms apart: a write lands at max(clock, the instance's last time + 1 ms) (src/sandbox/store.ts)
        await sendChanges(run.applying(afterEachWrite(c, () => void sb.advanceClock(5))), plan);
      },
    });
    sb.advanceClock(5 * MINUTE);
    sb.clearRequests();
    const next = await statefulPlan(sb, ruleSet, sb.store.now(), settings);
    expect(completed.length).toBeGreaterThanOrEqual(6);
    expect(
      sb
        .requests()
        .filter(
          (r) =>
            r.query.last_updated_time_after !== undefined &&
            r.query.last_updated_time_after === r.query.last_updated_time_before,
        ),
    ).toEqual([]);
    // the report reads their records: read again, one request each
    const reads = sb
      .requests()
      .filter((r) => r.method === "GET" && GET_RECORD.test(r.path))
      .map((r) => Number(GET_RECORD.exec(r.path)?.[1]));
    expect(completed.filter((id) => reads.includes(id))).toEqual(completed);
    expect(comparable(next.plan)).toEqual(comparable((await statelessPlan(sb, ruleSet, sb.store.now())).plan));
  }, 60_000);
});

describe("apply --state writes through", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 400, seed: 21, now: START });
  });
  afterAll(async () => {
    await sb.close();
  });

  /** The instances a plan --state run read one by one, and its stderr; its plan equals a stateless one. */
  async function planReads(rules: string, state: string): Promise<{ reads: Set<number>; err: string }> {
    sb.advanceClock(5 * MINUTE);
    sb.clearRequests();
    const plan = async (over: { state?: string }) => {
      const io = captureIO();
      const code = await planCommand(
        {
          paths: [rules],
          format: "json",
          detailedExitcode: false,
          rules: [],
          quiet: false,
          now: sb.store.now(),
          connection: connection(sb),
          ...over,
        },
        io,
      );
      expect(code).toBe(0);
      return { io, plan: comparable(JSON.parse(io.out()) as Plan) };
    };
    const stateful = await plan({ state });
    const reads = new Set(
      sb
        .requests()
        .flatMap((r) => (r.method === "GET" && GET_RECORD.test(r.path) ? [Number(GET_RECORD.exec(r.path)?.[1])] : [])),
    );
    expect(stateful.plan).toEqual((await plan({})).plan);
    return { reads, err: stateful.io.err() };
  }

  function applied(): number[] {
    return sb.requests().flatMap((r) => {
      const m = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
      return r.method === "POST" && r.status === 200 && m ? [Number(m[1])] : [];
    });
  }

  const applyOpts = (cwd: string, paths: string[], state: string) => ({
    paths,
    autoApprove: true,
    detailedExitcode: false,
    quiet: true,
    rules: [],
    state,
    now: sb.store.now(),
    cwd,
    connection: connection(sb),
  });

  it("apply rules --auto-approve --state and apply plan.json --state: the next plan reads none of the instances they changed", async () => {
    const work = await tempDir();
    dirs.push(work);
    const rules = await writeRules(work.dir, YAML);

    // plan and apply in one go
    const state = join(work.dir, "state-a");
    sb.clearRequests();
    expect(await applyCommand(applyOpts(work.dir, [rules], state), captureIO())).toBe(0);
    const first = applied();
    expect(first.length).toBeGreaterThan(5);
    const a = await planReads(rules, state);
    expect(first.filter((id) => a.reads.has(id))).toEqual([]);

    // a saved plan applied with the state dir: the state is carried forward with what the apply wrote
    const stateB = join(work.dir, "state-b");
    // people lower five claims under the approval threshold
    const waiting = sb.store
      .list(1042)
      .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111));
    for (const i of waiting.slice(0, 5)) sb.store.setValue(i.id, 50222, { inputValue: 10 });
    const planFile = join(work.dir, "plan.json");
    const io = captureIO();
    expect(
      await planCommand(
        {
          paths: [rules],
          format: "json",
          out: planFile,
          detailedExitcode: false,
          rules: [],
          quiet: true,
          state: stateB,
          now: sb.store.now(),
          connection: connection(sb),
        },
        io,
      ),
    ).toBe(0);
    sb.clearRequests();
    expect(await applyCommand({ ...applyOpts(work.dir, [planFile], stateB), autoApprove: false }, captureIO())).toBe(0);
    const second = applied();
    expect(second.length).toBe(5);
    const b = await planReads(rules, stateB);
    expect(second.filter((id) => b.reads.has(id))).toEqual([]);
    expect(b.err).toMatch(/^state: [1-9][\d,]* instances from the state/m);
  }, 60_000);
});

describe("the lookback", () => {
  it("a run long after the last change lists nothing again: from when the last run looked, by the service's clock", async () => {
    for (const quirks of [[], ["no-date"]]) {
      const sb = await startSandbox({ port: 0, instances: 300, seed: 4, now: START, quirks });
      try {
        const settings = await stateDir();
        await statefulPlan(sb, ruleSet, sb.store.now(), settings);
        // a burst of changes, read by a run 15 s later (more than the margin for late commits)
        sb.advanceClock(1_000);
        sb.simulate({ seed: 9, changes: 30, kinds: ["edit-value", "edit-tags"] });
        sb.advanceClock(15_000);
        await statefulPlan(sb, ruleSet, sb.store.now(), settings);
        // 127 s after the burst: nothing changed since the last run looked
        sb.advanceClock(112_000);
        const explained: StateChoice[] = [];
        const quiet = await statefulPlan(sb, ruleSet, sb.store.now(), settings, { explain: (c) => explained.push(c) });
        const changes = explained.filter((c) => c.subject === "changes since the last run");
        expect(changes.length).toBeGreaterThan(0);
        if (quirks.length === 0) {
          for (const c of changes)
            expect(c.why).toMatch(
              /^0 instances updated since .* \(when the last run looked, by the service's clock, less 10 s for late commits\)$/,
            );
          expect(quiet.counts?.readAgain).toBe(0);
        } else {
          // no Date: from the last run's start by our clock, less two minutes, which still covers the burst
          for (const c of changes)
            expect(c.why).toMatch(
              /\(the last run, by this machine's clock \(the service sent no Date\), less 120 s for clock skew\)$/,
            );
          expect(changes.some((c) => !c.why.startsWith("0 instances"))).toBe(true);
        }
        expect(comparable(quiet.plan)).toEqual(comparable((await statelessPlan(sb, ruleSet, sb.store.now())).plan));
      } finally {
        await sb.close();
      }
    }
  }, 60_000);
});

/** Demo data: deterministic from seed and count, shaped as documented, and large enough to matter. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIRST_INSTANCE_ID, SandboxStore, TAG_POOL, WORKFLOWS, type RunningSandbox } from "../../src/sandbox/index.js";
import { NOW, call, start, statusOf, type ListPage } from "./helpers.js";

const DAY = 86_400_000;

describe("determinism", () => {
  it("the same seed and count give the same data; another seed does not", () => {
    const a = new SandboxStore({ seed: 5, instances: 300, now: NOW }).list();
    const b = new SandboxStore({ seed: 5, instances: 300, now: NOW }).list();
    const c = new SandboxStore({ seed: 6, instances: 300, now: NOW }).list();
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("a smaller count is a prefix of a larger one", () => {
    const small = new SandboxStore({ seed: 5, instances: 50, now: NOW }).list();
    const large = new SandboxStore({ seed: 5, instances: 400, now: NOW }).list();
    expect(large.slice(0, 50)).toEqual(small);
  });

  it("the same seed gives the same HTTP answers (up to the port)", async () => {
    const [x, y] = await Promise.all([start({ seed: 9 }), start({ seed: 9 })]);
    try {
      const q = "/v2/processes/1042/instances/?page_size=50&ordering=-deadline";
      const ax = await call<ListPage>(x, q);
      const ay = await call<ListPage>(y, q);
      const strip = (p: ListPage, o: string): string => JSON.stringify(p).split(o).join("ORIGIN");
      expect(strip(ax.body, x.origin)).toBe(strip(ay.body, y.origin));
      const id = x.store.ids()[10];
      const rx = await call(x, `/instances/${id}/?inject_values=true`);
      const ry = await call(y, `/instances/${id}/?inject_values=true`);
      expect(JSON.stringify(rx.body).split(x.origin).join("O")).toBe(JSON.stringify(ry.body).split(y.origin).join("O"));
    } finally {
      await Promise.all([x.close(), y.close()]);
    }
  });
});

describe("shape of the demo data", () => {
  const store = new SandboxStore({ seed: 1, instances: 3000, now: NOW });
  const all = store.list();

  it("ids count up from 100001 and every workflow has instances, Expense claim the most", () => {
    expect(all.map((i) => i.id)).toEqual(Array.from({ length: 3000 }, (_, k) => FIRST_INSTANCE_ID + k));
    const per = WORKFLOWS.map((w) => all.filter((i) => i.processId === w.id).length);
    expect(per.every((n) => n > 200)).toBe(true);
    expect(Math.max(...per)).toBe(per[0]);
  });

  it("statuses are roughly 60 / 25 / 15 per cent", () => {
    const share = (s: string): number => all.filter((i) => statusOf(i) === s).length / all.length;
    expect(share("running")).toBeGreaterThan(0.55);
    expect(share("running")).toBeLessThan(0.65);
    expect(share("completed")).toBeGreaterThan(0.2);
    expect(share("completed")).toBeLessThan(0.3);
    expect(share("aborted")).toBeGreaterThan(0.1);
    expect(share("aborted")).toBeLessThan(0.2);
  });

  it("times, steps, stages and names are consistent", () => {
    const now = NOW.getTime();
    for (const i of all) {
      const wf = WORKFLOWS.find((w) => w.id === i.processId);
      if (!wf) throw new Error("unknown workflow");
      expect(i.startedTime).toBeLessThanOrEqual(now);
      expect(i.startedTime).toBeGreaterThanOrEqual(now - 181 * DAY);
      if (i.lastUpdatedTime !== null) {
        expect(i.lastUpdatedTime).toBeGreaterThanOrEqual(i.startedTime);
        expect(i.lastUpdatedTime).toBeLessThanOrEqual(now);
      }
      expect(i.name).toMatch(new RegExp(`^${wf.name} #${i.id} — \\S+ \\S+`));
      expect(wf.stages).toContain(i.stage);
      expect(i.visibilityMode).toBe(wf.visibility_mode);
      if (i.visibilityMode === "restrictive") expect(i.visibilityTeams.length).toBeGreaterThan(0);
      expect(i.tags.length).toBeLessThanOrEqual(3);
      expect(new Set(i.tags).size).toBe(i.tags.length);
      for (const t of i.tags) expect(TAG_POOL).toContain(t);
      const status = statusOf(i);
      if (status === "running") {
        expect(i.activeStepIds).toHaveLength(1);
        expect(i.reachedStepIds).toContain(i.activeStepIds[0]);
      } else {
        expect(i.activeStepIds).toEqual([]);
        expect(i.lastUpdatedTime).toBe(i.completedTime ?? i.abortedTime);
      }
      if (status === "completed") expect(i.stepCompletedTimes.size).toBe(wf.steps.length);
      for (const stepId of i.stepDeadlines.keys()) expect(i.activeStepIds).toContain(stepId);
      for (const actionId of i.values.keys()) {
        const step = wf.steps.find((s) => s.actions.some((a) => a.id === actionId));
        expect(i.reachedStepIds).toContain(step?.id);
      }
    }
  });

  it("has every priority, deadlines past and future, some never-updated instances and some empty fields", () => {
    const now = NOW.getTime();
    expect(new Set(all.map((i) => i.priority))).toEqual(new Set([null, "H", "V"]));
    expect(all.some((i) => i.deadline !== null && i.deadline < now)).toBe(true);
    expect(all.some((i) => i.deadline !== null && i.deadline > now)).toBe(true);
    expect(all.some((i) => i.deadline === null)).toBe(true);
    expect(all.some((i) => i.lastUpdatedTime === null)).toBe(true);
    expect(all.some((i) => i.stepDeadlines.size > 0)).toBe(true);
    expect(all.filter((i) => i.startedTime >= now - 30 * DAY).length).toBeGreaterThan(100);
    const reached = all.filter((i) => i.processId === 1042 && i.reachedStepIds.includes(20110));
    expect(reached.some((i) => !i.values.has(50220))).toBe(true);
  });

  it("the demo rule 'approve small expenses' finds a good share of running claims on step 20111", () => {
    const waiting = all.filter(
      (i) => i.processId === 1042 && statusOf(i) === "running" && i.activeStepIds.includes(20111),
    );
    const small = waiting.filter((i) => {
      const amount = i.values.get(50222) as { inputValue?: number } | undefined;
      const currency = i.values.get(50223) as { inputValue?: { radioItemSelected?: string } } | undefined;
      return (
        (amount?.inputValue ?? Infinity) < 100 &&
        currency?.inputValue?.radioItemSelected === "EUR" &&
        i.tags.includes("expenses")
      );
    });
    expect(waiting.length).toBeGreaterThan(300);
    expect(small.length / waiting.length).toBeGreaterThan(0.15);
  });
});

describe("scale", () => {
  let big: RunningSandbox;
  beforeAll(async () => {
    big = await start({ instances: 100_000 });
  });
  afterAll(() => big.close());

  it("holds 100,000 instances and serves a 500-item page", async () => {
    expect(big.store.size).toBe(100_000);
    const res = await call<ListPage>(
      big,
      "/v2/processes/1042/instances/?page_size=500&ordering=-last_updated_time&status=running",
    );
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(500);
    expect(res.body.count).toBe(big.store.list(1042).filter((i) => statusOf(i) === "running").length);
  });
});

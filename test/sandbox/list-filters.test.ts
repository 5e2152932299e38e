/** 4.2 filters: each one, and combinations, checked against the store's own data. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceState, RunningSandbox } from "../../src/sandbox/index.js";
import { NOW, call, endedOf, idsWhere, listAll, progressOf, runtimeOf, sorted, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 1200 });
});
afterAll(() => sb.close());

const DAY = 86_400_000;
const MIN = 60_000;
const t = (ms: number): string => new Date(ms).toISOString();

async function expectFilter(
  processId: number,
  query: string,
  pred: (i: InstanceState) => boolean,
  nonEmpty = true,
): Promise<void> {
  const { ids, pages } = await listAll(sb, processId, query);
  const expected = idsWhere(sb, processId, pred);
  if (nonEmpty) expect(expected.length, `expected some instances for ${query}`).toBeGreaterThan(0);
  expect(sorted(ids)).toEqual(sorted(expected));
  expect(pages[0]?.count).toBe(expected.length);
}

describe("4.2 filters", () => {
  it("without filters lists every instance of the workflow, in id order", async () => {
    const { ids } = await listAll(sb, 1042, "");
    expect(ids).toEqual(sb.store.ids(1042));
  });

  it("status in repeated form, comma form and single", async () => {
    await expectFilter(1042, "status=running", (i) => statusOf(i) === "running");
    await expectFilter(1042, "status=running&status=aborted", (i) => statusOf(i) !== "completed");
    await expectFilter(1042, "status=completed,aborted", (i) => statusOf(i) !== "running");
  });

  it("priority H, V and null (Regular)", async () => {
    await expectFilter(1042, "priority=H", (i) => i.priority === "H");
    await expectFilter(1042, "priority=V", (i) => i.priority === "V");
    await expectFilter(1042, "priority=null", (i) => i.priority === null);
  });

  it("name is a case-insensitive substring", async () => {
    const someone = sb.store.list(1042)[3]?.name.split("— ")[1]?.split(" ")[0] ?? "x";
    await expectFilter(1042, `name=${encodeURIComponent(someone.toUpperCase())}`, (i) =>
      i.name.toLowerCase().includes(someone.toLowerCase()),
    );
    await expectFilter(1042, "name=%23100", (i) => i.name.includes("#100"));
  });

  it("query matches name or tags", async () => {
    await expectFilter(
      1042,
      "query=urgent",
      (i) => i.name.toLowerCase().includes("urgent") || i.tags.some((x) => x.includes("urgent")),
    );
    await expectFilter(1043, "query=Onboarding", (i) => i.name.toLowerCase().includes("onboarding"));
  });

  it("tags: comma-separated with OR semantics", async () => {
    await expectFilter(1042, "tags=expenses", (i) => i.tags.includes("expenses"));
    await expectFilter(1042, "tags=vip,audit", (i) => i.tags.includes("vip") || i.tags.includes("audit"));
  });

  it("organization, process and lead_user", async () => {
    await expectFilter(1042, "organization=1", () => true);
    await expectFilter(1042, "organization=2", () => false, false);
    await expectFilter(1042, "process=1042", () => true);
    await expectFilter(1042, "process=1043", () => false, false);
    await expectFilter(1042, "lead_user=2", () => true);
    await expectFilter(1044, "lead_user=2", () => false, false);
    await expectFilter(1044, "lead_user=1", () => true);
  });

  it("active_step_id", async () => {
    await expectFilter(1042, "active_step_id=20111", (i) => i.activeStepIds.includes(20111));
    await expectFilter(1043, "active_step_id=20121", (i) => i.activeStepIds.includes(20121));
  });

  it("progress_min / progress_max (inclusive)", async () => {
    await expectFilter(1042, "progress_min=34", (i) => progressOf(i) >= 34);
    await expectFilter(1042, "progress_max=33", (i) => progressOf(i) <= 33);
    await expectFilter(1042, "progress_min=60&progress_max=70", (i) => progressOf(i) >= 60 && progressOf(i) <= 70);
    await expectFilter(1042, "progress_min=100", (i) => progressOf(i) === 100);
  });

  it("total_runtime_min / max in every accepted duration format", async () => {
    await expectFilter(1042, "total_runtime_min=PT50M", (i) => runtimeOf(i) >= 50 * MIN);
    await expectFilter(1042, "total_runtime_max=00:50", (i) => runtimeOf(i) <= 50 * MIN, false);
    await expectFilter(
      1042,
      `total_runtime_min=${encodeURIComponent("10 09:30")}`,
      (i) => runtimeOf(i) >= 10 * DAY + 9.5 * 60 * MIN,
    );
    await expectFilter(1042, "total_runtime_max=480:00:00", (i) => runtimeOf(i) <= 480 * 60 * MIN);
    await expectFilter(
      1042,
      "total_runtime_min=P5D&total_runtime_max=P1W",
      (i) => runtimeOf(i) >= 5 * DAY && runtimeOf(i) <= 7 * DAY,
    );
  });

  const now = NOW.getTime();
  const dateCases: [string, (i: InstanceState) => number | null][] = [
    ["started_time", (i) => i.startedTime],
    ["last_updated_time", (i) => i.lastUpdatedTime ?? i.startedTime], // never changed: its start, as the record shows
    ["deadline", (i) => i.deadline],
    ["aborted_time", (i) => i.abortedTime],
    ["completed_time", (i) => i.completedTime],
    ["ended_time", endedOf],
  ];
  for (const [field, get] of dateCases) {
    it(`${field}_after / ${field}_before (inclusive; no value never matches)`, async () => {
      const lo = now - 60 * DAY,
        hi = now - 20 * DAY;
      await expectFilter(1042, `${field}_after=${t(lo)}`, (i) => (get(i) ?? -Infinity) >= lo);
      await expectFilter(1042, `${field}_before=${t(hi)}`, (i) => {
        const v = get(i);
        return v !== null && v <= hi;
      });
      await expectFilter(1042, `${field}_after=${t(lo)}&${field}_before=${t(hi)}`, (i) => {
        const v = get(i);
        return v !== null && v >= lo && v <= hi;
      });
    });
  }

  it("step_deadline_after / _before look at active steps' deadlines", async () => {
    const lo = now - 5 * DAY;
    const inRange = (i: InstanceState, a: number, b: number): boolean =>
      [...i.stepDeadlines].some(([s, d]) => i.activeStepIds.includes(s) && d >= a && d <= b);
    await expectFilter(1042, `step_deadline_after=${t(lo)}`, (i) => inRange(i, lo, Infinity));
    await expectFilter(1042, `step_deadline_before=${t(lo)}`, (i) => inRange(i, -Infinity, lo));
  });

  it("accepts date-only and offset forms of ISO 8601", async () => {
    await expectFilter(1042, "started_time_after=2026-05-01", (i) => i.startedTime >= Date.UTC(2026, 4, 1));
    await expectFilter(
      1042,
      `started_time_after=${encodeURIComponent("2026-05-01T02:00:00+02:00")}`,
      (i) => i.startedTime >= Date.UTC(2026, 4, 1),
    );
  });

  it("combines filters with AND", async () => {
    const lo = now - 30 * DAY;
    await expectFilter(
      1042,
      `status=running&active_step_id=20111&tags=expenses&started_time_after=${t(lo)}&priority=H`,
      (i) =>
        statusOf(i) === "running" &&
        i.activeStepIds.includes(20111) &&
        i.tags.includes("expenses") &&
        i.startedTime >= lo &&
        i.priority === "H",
      false,
    );
    await expectFilter(
      1042,
      "status=running&active_step_id=20111&tags=expenses",
      (i) => statusOf(i) === "running" && i.activeStepIds.includes(20111) && i.tags.includes("expenses"),
    );
  });

  it("ignores empty values like an absent parameter", async () => {
    await expectFilter(1042, "status=&name=&tags=", () => true);
  });

  const bad: [string, RegExp][] = [
    ["status=paused", /status/],
    ["priority=X", /priority/],
    ["progress_min=101", /progress_min/],
    ["progress_max=-1", /progress_max/],
    ["progress_min=abc", /integer/],
    ["total_runtime_min=fifty", /duration/],
    ["total_runtime_max=P1Y", /duration/],
    ["started_time_after=yesterday", /ISO 8601/],
    ["deadline_before=2026-02-30", /ISO 8601/],
    ["lead_user=me", /integer/],
    ["active_step_id=abc", /integer/],
    ["organization=x", /integer/],
  ];
  for (const [query, message] of bad) {
    it(`400 with a helpful detail for ${query}`, async () => {
      const res = await call<{ detail: string }>(sb, `/v2/processes/1042/instances/?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(message);
    });
  }
});

/** 4.2 ordering: every value, ascending and descending, several at once, ties broken by id. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceState, RunningSandbox } from "../../src/sandbox/index.js";
import { call, endedOf, listAll, progressOf, runtimeOf, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 800 });
});
afterAll(() => sb.close());

type Val = number | string | null;
const PRIORITY: Record<string, number> = { H: 1, V: 2 };
const getters: Record<string, (i: InstanceState) => Val> = {
  name: (i) => i.name,
  started_time: (i) => i.startedTime,
  last_updated_time: (i) => i.lastUpdatedTime ?? i.startedTime, // never changed: its start, as the record shows
  status: statusOf,
  priority: (i) => (i.priority ? (PRIORITY[i.priority] ?? 0) : 0),
  progress: progressOf,
  deadline: (i) => i.deadline,
  ended_time: endedOf,
  total_runtime: (i) => runtimeOf(i),
};

/** The documented semantics: nulls last ascending / first descending, then id ascending. */
function expectedOrder(processId: number, fields: string[]): number[] {
  const cmp = (a: Val, b: Val): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);
  return sb.store
    .list(processId)
    .sort((x, y) => {
      for (const f of fields) {
        const desc = f.startsWith("-");
        const get = getters[desc ? f.slice(1) : f];
        if (!get) throw new Error(f);
        const c = cmp(get(x), get(y));
        if (c) return desc ? -c : c;
      }
      return x.id - y.id;
    })
    .map((i) => i.id);
}

describe("4.2 ordering", () => {
  for (const field of Object.keys(getters)) {
    for (const f of [field, `-${field}`]) {
      it(`ordering=${f}`, async () => {
        const { ids } = await listAll(sb, 1042, `ordering=${f}`);
        expect(ids).toEqual(expectedOrder(1042, [f]));
      });
    }
  }

  it("several comma-separated values apply in turn", async () => {
    const { ids } = await listAll(sb, 1042, "ordering=status,-priority,name");
    expect(ids).toEqual(expectedOrder(1042, ["status", "-priority", "name"]));
    const other = await listAll(sb, 1043, "ordering=-progress,deadline");
    expect(other.ids).toEqual(expectedOrder(1043, ["-progress", "deadline"]));
  });

  it("combines with filters and paging (page_size 37)", async () => {
    const ids: number[] = [];
    let url: string | null = "/v2/processes/1042/instances/?status=running&ordering=-last_updated_time&page_size=37";
    while (url) {
      const res: { status: number; body: { next: string | null; results: { id: number }[] } } = await call(sb, url);
      ids.push(...res.body.results.map((r) => r.id));
      url = res.body.next;
    }
    const expected = expectedOrder(1042, ["-last_updated_time"]).filter((id) => sb.store.status(id) === "running");
    expect(ids).toEqual(expected);
  });

  it("default ordering is id ascending", async () => {
    const { ids } = await listAll(sb, 1044, "");
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.length).toBe(sb.store.ids(1044).length);
  });

  it("rejects an unknown ordering with 400", async () => {
    const res = await call<{ detail: string }>(sb, "/v2/processes/1042/instances/?ordering=colour");
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/Unknown ordering "colour"/);
  });
});

/** 4.6 GET /processes/{pid}/steps/{sid}/actions/{aid}/ — values across instances, page/limit, filters. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceState, RunningSandbox } from "../../src/sandbox/index.js";
import { NOW, call, progressOf, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 1500 });
});
afterAll(() => sb.close());

interface FieldPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: { instance_id: number; instance_name: string; value: unknown; settings: Record<string, unknown> }[];
}
const AMOUNT = "/processes/1042/steps/20111/actions/50222/";

async function all(query: string, key: "admin" | "lead" | "member" = "admin"): Promise<FieldPage["results"]> {
  const out: FieldPage["results"] = [];
  let url: string | null = `${AMOUNT}?limit=500${query ? `&${query}` : ""}`;
  while (url) {
    const res: { status: number; body: FieldPage } = await call<FieldPage>(sb, url, { key });
    expect(res.status).toBe(200);
    out.push(...res.body.results);
    url = res.body.next;
  }
  return out;
}
const withAmount = (pred: (i: InstanceState) => boolean = () => true): number[] =>
  sb.store
    .list(1042)
    .filter((i) => i.values.has(50222) && pred(i))
    .map((i) => i.id);

describe("4.6 form-field details", () => {
  it("lists instances where the field holds a value, with value and settings", async () => {
    const results = await all("");
    expect(results.map((r) => r.instance_id)).toEqual(withAmount());
    const first = results[0];
    const inst = sb.store.get(first?.instance_id ?? 0);
    expect(first?.instance_name).toBe(inst?.name);
    expect(first?.value).toEqual(inst?.values.get(50222));
    expect(first?.settings).toMatchObject({ name: "Amount", type: "number", action_id: 50222, step_id: 20111 });
    expect(withAmount().length).toBeLessThan(sb.store.ids(1042).length); // some instances have no value
  });

  it("page/limit: default 100, clamped to 500, absolute next/previous, page past the end 404", async () => {
    const total = withAmount().length;
    const p1 = await call<FieldPage>(sb, AMOUNT);
    expect(p1.status).toBe(200);
    expect(p1.headers.get("content-type")).toBe("application/json");
    expect(p1.body.results).toHaveLength(100);
    expect(p1.body.count).toBe(total);
    expect(p1.body.previous).toBeNull();
    expect(p1.body.next).toBe(`${sb.baseUrl}${AMOUNT}?page=2`);
    const p2 = await call<FieldPage>(sb, p1.body.next ?? "");
    expect(p2.body.previous).toBe(`${sb.baseUrl}${AMOUNT}`);
    expect(p2.body.results[0]?.instance_id).toBe(withAmount()[100]);
    expect((await call<FieldPage>(sb, `${AMOUNT}?limit=9999`)).body.results).toHaveLength(Math.min(500, total));
    const last = Math.ceil(total / 100);
    const lastPage = await call<FieldPage>(sb, `${AMOUNT}?page=${last}`);
    expect(lastPage.body.next).toBeNull();
    expect(lastPage.body.previous).toContain(`page=${last - 1}`);
    const past = await call<{ detail: string }>(sb, `${AMOUNT}?page=${last + 1}`);
    expect(past.status).toBe(404);
    expect(past.body.detail).toBe("Invalid page.");
    for (const bad of ["page=0", "page=x", "limit=0", "limit=-5"])
      expect((await call(sb, `${AMOUNT}?${bad}`)).status).toBe(400);
  });

  it("instance_ids (comma-separated or repeated) restricts to those instances", async () => {
    const some = withAmount().slice(5, 25);
    const noValue = sb.store.list(1042).find((i) => !i.values.has(50222))?.id ?? 0;
    const ids = [...some, noValue, 999999];
    expect((await all(`instance_ids=${ids.join(",")}`)).map((r) => r.instance_id)).toEqual(some);
    const repeated = ids.map((id) => `instance_ids=${id}`).join("&");
    expect((await all(repeated)).map((r) => r.instance_id)).toEqual(some);
    expect((await call(sb, `${AMOUNT}?instance_ids=1,x`)).status).toBe(400);
  });

  it("status, active_step_id, tags, priority, name, query, id, progress filters", async () => {
    const pick = withAmount()[7];
    const cases: [string, (i: InstanceState) => boolean][] = [
      ["status=running", (i) => statusOf(i) === "running"],
      ["status=completed&status=aborted", (i) => statusOf(i) !== "running"],
      ["active_step_id=20111", (i) => i.activeStepIds.includes(20111)],
      ["tags=vip,q4", (i) => i.tags.includes("vip") || i.tags.includes("q4")],
      ["priority=V", (i) => i.priority === "V"],
      ["name=%2310", (i) => i.name.includes("#10")],
      ["query=travel", (i) => i.name.toLowerCase().includes("travel") || i.tags.includes("travel")],
      ["progress=33", (i) => progressOf(i) === 33],
      [`id=${pick}`, (i) => i.id === pick],
      [
        `started_time_after=${new Date(NOW.getTime() - 30 * 86_400_000).toISOString()}`,
        (i) => i.startedTime >= NOW.getTime() - 30 * 86_400_000,
      ],
      [`deadline_before=${NOW.toISOString()}`, (i) => i.deadline !== null && i.deadline <= NOW.getTime()],
    ];
    for (const [q, pred] of cases) {
      const expected = withAmount(pred);
      expect(expected.length, q).toBeGreaterThan(0);
      expect(
        (await all(q)).map((r) => r.instance_id),
        q,
      ).toEqual(expected);
    }
  });

  it("ordering", async () => {
    const got = (await all("ordering=-priority,name")).map((r) => r.instance_id);
    const rank = (i: InstanceState): number => (i.priority === "V" ? 2 : i.priority === "H" ? 1 : 0);
    const expected = sb.store
      .list(1042)
      .filter((i) => i.values.has(50222))
      .sort((a, b) => rank(b) - rank(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.id - b.id)
      .map((i) => i.id);
    expect(got).toEqual(expected);
  });

  it("bad filters are 400 (bare date names ask for _after/_before)", async () => {
    const bare = await call<{ detail: string }>(sb, `${AMOUNT}?started_time=2026-01-01`);
    expect(bare.status).toBe(400);
    expect(bare.body.detail).toMatch(/started_time_after/);
    expect((await call(sb, `${AMOUNT}?status=nope`)).status).toBe(400);
    expect((await call(sb, `${AMOUNT}?ordering=nope`)).status).toBe(400);
  });

  it("visibility: a member sees only the instances it may see", async () => {
    // Description (step 20110) is filled before the member's step 20111 is reached, so some are hidden from it.
    const path = "/processes/1042/steps/20110/actions/50220/?limit=500";
    const got: number[] = [];
    let url: string | null = path;
    while (url) {
      const res: { body: FieldPage } = await call<FieldPage>(sb, url, { key: "member" });
      got.push(...res.body.results.map((r) => r.instance_id));
      url = res.body.next;
    }
    const all1042 = sb.store.list(1042).filter((i) => i.values.has(50220));
    expect(got).toEqual(all1042.filter((i) => i.reachedStepIds.includes(20111)).map((i) => i.id));
    expect(got.length).toBeLessThan(all1042.length);
    expect(got.length).toBeGreaterThan(0);
  });

  it("404 for unknown or mismatched workflow, step or action, and for invisible workflows", async () => {
    for (const p of [
      "/processes/1042/steps/20121/actions/50222/",
      "/processes/1042/steps/20111/actions/50240/",
      "/processes/9/steps/20111/actions/50222/",
      "/processes/1042/steps/20111/actions/x/",
    ]) {
      expect((await call(sb, p)).status, p).toBe(404);
    }
    expect((await call(sb, "/processes/1044/steps/20131/actions/50263/", { key: "lead" })).status).toBe(404);
    expect((await call(sb, "/processes/1044/steps/20131/actions/50263/", { key: "admin" })).status).toBe(200);
  });
});

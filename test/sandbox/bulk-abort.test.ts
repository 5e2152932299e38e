/** 4.5 POST /instances/bulk/abort — three body media types, who may abort, limits. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { call, postJson, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 600 });
});
afterAll(() => sb.close());

const PATH = "/instances/bulk/abort";
const taken = new Set<number>();
function running(processId: number, n: number): number[] {
  const ids = sb.store
    .list(processId)
    .filter((i) => statusOf(i) === "running" && !taken.has(i.id))
    .slice(0, n)
    .map((i) => i.id);
  if (ids.length < n) throw new Error("fixture: not enough running instances");
  ids.forEach((id) => taken.add(id));
  return ids;
}

describe("4.5 bulk abort", () => {
  it("JSON body: aborts running instances, answers the aborted ids with media type version=v1", async () => {
    const ids = running(1042, 3);
    const res = await postJson<{ ids: number[] }>(sb, PATH, { ids });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; version=v1");
    expect(res.body).toEqual({ ids });
    for (const id of ids) {
      expect(sb.store.status(id)).toBe("aborted");
      const inst = sb.store.get(id);
      expect(inst?.abortedTime).not.toBeNull();
      expect(inst?.lastUpdatedTime).toBe(inst?.abortedTime);
      expect(inst?.activeStepIds).toEqual([]);
    }
  });

  it("urlencoded body, repeated and comma-separated", async () => {
    const [a, b, c] = running(1043, 3);
    const res = await call<{ ids: number[] }>(sb, PATH, {
      method: "POST",
      body: `ids=${a}&ids=${b},${c}`,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect(res.body.ids).toEqual([a, b, c]);
    expect([a, b, c].map((id) => sb.store.status(id ?? 0))).toEqual(["aborted", "aborted", "aborted"]);
  });

  it("multipart/form-data body", async () => {
    const ids = running(1044, 2);
    const form = new FormData();
    for (const id of ids) form.append("ids", String(id));
    const res = await call<{ ids: number[] }>(sb, PATH, { method: "POST", body: form });
    expect(res.status).toBe(200);
    expect(res.body.ids).toEqual(ids);
    expect(ids.every((id) => sb.store.status(id) === "aborted")).toBe(true);
    const log = sb.requests().filter((e) => e.path === "/api/instances/bulk/abort");
    expect(log[log.length - 1]?.body).toEqual({ ids: ids.map(String) });
  });

  it("leaves out, silently, ids that are not running, unknown, or not the key's to abort", async () => {
    const [mine] = running(1042, 1);
    const notMine = running(1044, 1)[0] ?? 0; // lead 2 does not lead workflow 1044
    const completed = sb.store.list(1042).find((i) => statusOf(i) === "completed")?.id ?? 0;
    const res = await postJson<{ ids: number[] }>(sb, PATH, { ids: [completed, 424242, notMine, mine, mine] }, "lead");
    expect(res.status).toBe(200);
    expect(res.body.ids).toEqual([mine]);
    expect(sb.store.status(notMine)).toBe("running");
    expect(sb.store.get(completed)?.abortedTime).toBeNull();
  });

  it("a member may not abort (even instances it sees); the outsider neither", async () => {
    const visible = sb.store
      .list(1042)
      .find((i) => statusOf(i) === "running" && i.reachedStepIds.includes(20111) && !taken.has(i.id));
    const id = visible?.id ?? 0;
    expect((await call(sb, `/instances/${id}/`, { key: "member" })).status).toBe(200);
    for (const key of ["member", "outsider"] as const) {
      const res = await postJson<{ ids: number[] }>(sb, PATH, { ids: [id] }, key);
      expect(res.status).toBe(200);
      expect(res.body.ids).toEqual([]);
    }
    expect(sb.store.status(id)).toBe("running");
  });

  it("an empty list is fine; more than 500 ids is a 400", async () => {
    expect((await postJson<{ ids: number[] }>(sb, PATH, { ids: [] })).body).toEqual({ ids: [] });
    const many = Array.from({ length: 501 }, (_, k) => 1 + k);
    const res = await postJson<{ detail: string }>(sb, PATH, { ids: many });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/at most 500/);
  });

  it("400 for bad bodies in every media type; 415 for other media types", async () => {
    const cases: [string, string, number][] = [
      ["application/json", '{"ids": "1,2"}', 400],
      ["application/json", '{"ids": [1, "x"]}', 400],
      ["application/json", "{}", 400],
      ["application/json", "[1,2", 400],
      ["application/x-www-form-urlencoded", "ids=1&ids=abc", 400],
      ["application/x-www-form-urlencoded", "other=1", 400],
      ["multipart/form-data; boundary=xyz", "not really multipart", 400],
      ["text/plain", "ids=1", 415],
    ];
    for (const [type, body, status] of cases) {
      const res = await call<{ detail: string }>(sb, PATH, { method: "POST", body, headers: { "Content-Type": type } });
      expect(res.status, `${type} ${body}`).toBe(status);
      expect(typeof res.body.detail).toBe("string");
    }
    expect((await call(sb, PATH, { method: "POST" })).status).toBe(400);
  });

  it("the path has no trailing slash: the slashed path is 404; GET is 405", async () => {
    const [id] = running(1042, 1);
    expect((await postJson(sb, `${PATH}/`, { ids: [id] })).status).toBe(404);
    expect(sb.store.status(id ?? 0)).toBe("running");
    const get = await call(sb, PATH);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toContain("POST");
  });
});

/** Authentication (401) and what each demo key sees (404 for the rest, so existence does not leak). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { call, idsWhere, listAll, sorted, start } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 800 });
});
afterAll(() => sb.close());

describe("authentication", () => {
  it("401 without a key, with another scheme, or with an unknown key; WWW-Authenticate names the scheme", async () => {
    const variants: Record<string, string>[] = [
      {},
      { Authorization: "Bearer sandbox-admin" },
      { Authorization: "Api-Key nope" },
      { Authorization: "Api-Key" },
    ];
    for (const headers of variants) {
      const res = await call<{ detail: string }>(sb, "/processes/", { key: null, headers });
      expect(res.status).toBe(401);
      expect(res.body.detail.length).toBeGreaterThan(5);
      expect(res.headers.get("www-authenticate")).toMatch(/Api-Key/);
    }
  });

  it("every endpoint requires the key", async () => {
    sb.clearRequests();
    const id = sb.store.ids(1042)[0];
    const gets = [
      "/processes/",
      "/v2/processes/1042/instances/",
      `/instances/${id}/`,
      "/processes/1042/steps/20111/actions/50222/",
    ];
    for (const p of gets) expect((await call(sb, p, { key: null })).status, p).toBe(401);
    const posts = [`/instances/${id}/complete_step/`, "/instances/bulk/abort"];
    for (const p of posts) {
      const res = await call(sb, p, {
        key: null,
        method: "POST",
        body: JSON.stringify({ ids: [id], step_id: 20111 }),
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status, p).toBe(401);
    }
    expect(sb.requests().filter((e) => e.status === 401)).toHaveLength(gets.length + posts.length);
  });
});

describe("visibility per key", () => {
  it("4.1: admin sees all workflows, lead and member theirs, outsider none", async () => {
    const ids = async (key: "admin" | "lead" | "member" | "outsider"): Promise<number[]> =>
      (await call<{ id: number }[]>(sb, "/processes/", { key })).body.map((w) => w.id);
    expect(await ids("admin")).toEqual([1042, 1043, 1044, 1045]);
    expect(await ids("lead")).toEqual([1042, 1043]);
    expect(await ids("member")).toEqual([1042, 1043]);
    expect(await ids("outsider")).toEqual([]);
  });

  it("4.1 records carry id, name, description, url and folder", async () => {
    const res = await call<Record<string, unknown>[]>(sb, "/processes/");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body[0]).toEqual({
      id: 1042,
      name: "Expense claim",
      description: expect.any(String),
      url: `${sb.baseUrl}/processes/1042/`,
      folder: { id: 1, name: "Finance" },
    });
  });

  it("the lead sees every instance of the workflows it leads, and not the others", async () => {
    expect((await listAll(sb, 1042, "", "lead")).ids).toEqual(sb.store.ids(1042));
    expect((await call(sb, "/v2/processes/1044/instances/", { key: "lead" })).status).toBe(404);
    const other = sb.store.ids(1045)[0];
    expect((await call(sb, `/instances/${other}/`, { key: "lead" })).status).toBe(404);
  });

  it("the member sees involved instances where one of its steps was reached", async () => {
    const got = await listAll(sb, 1042, "", "member");
    const expected = idsWhere(sb, 1042, (i) => i.reachedStepIds.includes(20111));
    expect(sorted(got.ids)).toEqual(sorted(expected));
    expect(got.pages[0]?.count).toBe(expected.length);
    expect(expected.length).toBeLessThan(sb.store.ids(1042).length);
    const plus = await listAll(sb, 1043, "", "member");
    expect(sorted(plus.ids)).toEqual(sorted(idsWhere(sb, 1043, (i) => i.reachedStepIds.includes(20121))));
    const hidden = sb.store.list(1042).find((i) => !i.reachedStepIds.includes(20111));
    const shown = sb.store.list(1042).find((i) => i.reachedStepIds.includes(20111));
    expect((await call(sb, `/instances/${hidden?.id}/`, { key: "member" })).status).toBe(404);
    expect((await call(sb, `/instances/${shown?.id}/`, { key: "member" })).status).toBe(200);
  });

  it("the member follows public and restrictive modes (set through the store)", async () => {
    const [a, b, c] = sb.store
      .list(1042)
      .filter((i) => !i.reachedStepIds.includes(20111))
      .map((i) => i.id);
    sb.store.update(a ?? 0, (i) => {
      i.visibilityMode = "public";
    });
    sb.store.update(b ?? 0, (i) => {
      i.visibilityMode = "restrictive";
      i.visibilityTeams = [11, 12];
    });
    sb.store.update(c ?? 0, (i) => {
      i.visibilityMode = "restrictive";
      i.visibilityTeams = [13];
    });
    expect((await call(sb, `/instances/${a}/`, { key: "member" })).status).toBe(200);
    expect((await call(sb, `/instances/${b}/`, { key: "member" })).status).toBe(200);
    expect((await call(sb, `/instances/${c}/`, { key: "member" })).status).toBe(404);
    const listed = (await listAll(sb, 1042, "", "member")).ids;
    expect(listed).toContain(a);
    expect(listed).toContain(b);
    expect(listed).not.toContain(c);
  });

  it("the outsider gets 404 for every workflow and instance", async () => {
    expect((await call(sb, "/v2/processes/1042/instances/", { key: "outsider" })).status).toBe(404);
    expect((await call(sb, `/instances/${sb.store.ids(1044)[0]}/`, { key: "outsider" })).status).toBe(404);
    expect((await call(sb, "/processes/1044/steps/20131/actions/50263/", { key: "outsider" })).status).toBe(404);
  });

  it("an invisible workflow answers exactly like an unknown one", async () => {
    const invisible = await call(sb, "/v2/processes/1044/instances/", { key: "member" });
    const unknown = await call(sb, "/v2/processes/1044999/instances/", { key: "member" });
    expect(invisible.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(invisible.body).replace("1044", "X")).toBe(
      JSON.stringify(unknown.body).replace("1044999", "X"),
    );
  });
});

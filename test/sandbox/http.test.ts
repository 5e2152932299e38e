/** HTTP behaviour: unknown paths, methods, body limits, HEAD/OPTIONS, robustness, and the request log. */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogEntry, RunningSandbox } from "../../src/sandbox/index.js";
import { call, postJson, start } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 200 });
});
afterAll(() => sb.close());

/** Sends raw bytes and returns whatever comes back before the server closes or 1 s passes. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(sb.port, "127.0.0.1", () => socket.write(bytes));
    let out = "";
    socket.on("data", (d: Buffer) => {
      out += d.toString();
    });
    socket.on("close", () => resolve(out));
    socket.on("error", () => resolve(out));
    setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, 1000).unref();
  });
}

describe("HTTP surface", () => {
  it("unknown paths are 404 JSON, inside and outside /api (paths are exact, trailing slash included)", async () => {
    for (const p of [
      `${sb.baseUrl}/nothing/`,
      `${sb.baseUrl}/processes`,
      `${sb.baseUrl}/v2/processes/abc/instances/`,
      `${sb.origin}/`,
      `${sb.origin}/elsewhere`,
      `${sb.baseUrl}/instances/1/complete_step`,
    ]) {
      const res = await call<{ detail: string }>(sb, p);
      expect(res.status, p).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(typeof res.body.detail).toBe("string");
    }
  });

  it("405 with an Allow header for methods a known path does not take", async () => {
    const id = sb.store.ids()[0];
    const cases: [string, string, string][] = [
      ["/processes/", "POST", "GET"],
      ["/v2/processes/1042/instances/", "DELETE", "GET"],
      [`/instances/${id}/`, "PUT", "GET"],
      [`/instances/${id}/complete_step/`, "GET", "POST"],
      ["/instances/bulk/abort", "PATCH", "POST"],
      ["/processes/1042/steps/20111/actions/50222/", "POST", "GET"],
    ];
    for (const [p, method, allowed] of cases) {
      const res = await call<{ detail: string }>(sb, p, { method });
      expect(res.status, `${method} ${p}`).toBe(405);
      expect(res.headers.get("allow")).toContain(allowed);
      expect(res.body.detail).toMatch(method);
    }
  });

  it("HEAD answers like GET without a body; OPTIONS lists the methods", async () => {
    const head = await fetch(`${sb.baseUrl}/processes/`, {
      method: "HEAD",
      headers: { Authorization: "Api-Key sandbox-admin" },
    });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const options = await fetch(`${sb.baseUrl}/instances/bulk/abort`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toContain("POST");
  });

  it("413 for a body over 1 MB, and the server keeps serving", async () => {
    const id = sb.store.ids()[0];
    const big = JSON.stringify({
      step_id: 20111,
      actions: [{ action_id: 50230, input_object: { inputValue: "x".repeat(1_100_000) } }],
    });
    const res = await call<{ detail: string }>(sb, `/instances/${id}/complete_step/`, {
      method: "POST",
      body: big,
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/1 MB/);
    expect(sb.store.get(id ?? 0)?.values.get(50230)).not.toEqual({ inputValue: "x".repeat(1_100_000) });
    expect((await call(sb, "/processes/")).status).toBe(200);
  });

  it("garbage never crashes the server", async () => {
    const id = sb.store.ids()[0];
    const bodies = ["", "null", "0", '"text"', "[]", "{}", '{"step_id": null}', "\u0000\u0001", "{".repeat(10000)];
    for (const body of bodies) {
      const res = await call(sb, `/instances/${id}/complete_step/`, {
        method: "POST",
        body,
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status).toBe(400);
    }
    const answer = await raw("THIS IS NOT HTTP\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    for (const q of ["page_size=%FF", "cursor=%00", "ordering=,,,", "status=%E2%82%AC", "tags=,", "progress_min=1e2"]) {
      const res = await call(sb, `/v2/processes/1042/instances/?${q}`);
      expect([200, 400]).toContain(res.status);
    }
    expect((await call(sb, "/processes/")).status).toBe(200);
  });
});

describe("public tracking URL", () => {
  it("public_url answers without a key with name, status and stage; unknown tokens are 404", async () => {
    const id = sb.store.ids(1043)[2] ?? 0;
    const record = sb.store.record(id);
    const res = await fetch(record?.public_url ?? "");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      name: record?.name,
      workflow: "Employee onboarding",
      status: sb.store.status(id),
      stage: record?.stage,
    });
    expect((await fetch(`${sb.origin}/track/nope`)).status).toBe(404);
  });
});

describe("request log", () => {
  it("records every /api request in order with full path, query, body and status; not its own endpoint", async () => {
    sb.clearRequests();
    const id = sb.store.list(1042).find((i) => i.activeStepIds.includes(20111))?.id ?? 0;
    await call(sb, "/v2/processes/1042/instances/?status=running&status=aborted&page_size=5");
    await postJson(sb, `/instances/${id}/complete_step/`, { step_id: 20111, mode: "save", actions: [] });
    await call(sb, "/nothing/");
    await call(sb, "/processes/", { key: null });
    const res = await fetch(`${sb.origin}/__sandbox/requests`);
    expect(res.status).toBe(200);
    const log = (await res.json()) as RequestLogEntry[];
    expect(log.map((e) => [e.method, e.path, e.status])).toEqual([
      ["GET", "/api/v2/processes/1042/instances/", 200],
      ["POST", `/api/instances/${id}/complete_step/`, 200],
      ["GET", "/api/nothing/", 404],
      ["GET", "/api/processes/", 401],
    ]);
    expect(log[0]?.query).toEqual({ status: ["running", "aborted"], page_size: "5" });
    expect(log[1]?.body).toEqual({ step_id: 20111, mode: "save", actions: [] });
    expect(log[0]?.body).toBeNull();
    expect(Number.isNaN(Date.parse(log[0]?.at ?? ""))).toBe(false);
    expect(sb.requests()).toEqual(log);
  });

  it("DELETE clears it; other methods are 405", async () => {
    await call(sb, "/processes/");
    expect(sb.requests().length).toBeGreaterThan(0);
    const del = await fetch(`${sb.origin}/__sandbox/requests`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect(sb.requests()).toEqual([]);
    const post = await fetch(`${sb.origin}/__sandbox/requests`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("DELETE");
    expect((await (await fetch(`${sb.origin}/__sandbox/requests`)).json()) as unknown[]).toEqual([]);
  });
});

/**
 * The sandbox under abuse: malformed bodies and requests, bodies over 1 MB (and far over), a thousand concurrent
 * connections, slow clients that trickle headers, and a storm of concurrent, conflicting and broken mutations. It
 * answers every request it can read with JSON, keeps serving, cuts slow clients off, and its data stays consistent.
 * All sockets are on 127.0.0.1 and closed by the test.
 */
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CursorCodec } from "../../src/sandbox/cursor.js";
import { Faults } from "../../src/sandbox/faults.js";
import { startSandbox, SandboxStore, type InstanceState, type RunningSandbox } from "../../src/sandbox/index.js";
import { RequestLog } from "../../src/sandbox/request-log.js";
import { createSandboxServer, SERVER_TIMEOUTS } from "../../src/sandbox/server.js";
import { prng } from "./helpers.js";

let sb: RunningSandbox;
/** what the sandbox (in this process) writes to stderr: it reports its own bugs there as "internal error" */
const stderr: string[] = [];
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 400, seed: 33 });
  vi.spyOn(process.stderr, "write").mockImplementation(
    (chunk: string | Uint8Array) => (stderr.push(String(chunk)), true),
  );
});
afterEach(() => {
  expect(stderr.filter((l) => /internal error/.test(l)).map((l) => l.split("\n")[0])).toEqual([]);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await sb.close();
});

interface Reply {
  status: number;
  type: string | undefined;
  body: string;
}

/** One request over its own connection (no keep-alive), with any method, path, headers and body. */
function send(
  port: number,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { connection: "close", ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers["content-type"],
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const admin = { authorization: "Api-Key sandbox-admin" };

function expectJsonError(r: Reply): void {
  expect(r.type).toMatch(/^application\/json/);
  const parsed = JSON.parse(r.body) as { detail?: unknown };
  expect(typeof parsed.detail).toBe("string");
}

/** Still serving, and right: the workflow list answers as it should. */
async function stillServing(): Promise<void> {
  const r = await send(sb.port, "GET", "/api/processes/", undefined, admin);
  expect(r.status).toBe(200);
  expect((JSON.parse(r.body) as unknown[]).length).toBeGreaterThan(0);
}

/** Raw bytes over a socket; resolves with what came back when the server closes (or after `ms`). */
function raw(bytes: string | Buffer, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(sb.port, "127.0.0.1", () => socket.write(bytes));
    let out = "";
    socket.on("data", (d: Buffer) => (out += d.toString("latin1")));
    socket.on("close", () => resolve(out));
    socket.on("error", () => resolve(out));
    setTimeout(() => socket.destroy(), ms).unref();
  });
}

/** Each instance in exactly one state with steps that agree; counts by status add up, in the API and the store. */
async function expectConsistent(): Promise<void> {
  const now = sb.store.list();
  for (const i of now) {
    const ended = (i.completedTime !== null ? 1 : 0) + (i.abortedTime !== null ? 1 : 0);
    expect(ended, `${i.id}`).toBeLessThanOrEqual(1);
    if (ended === 1) expect(i.activeStepIds, `${i.id}`).toEqual([]);
    else expect(i.activeStepIds.length, `${i.id}`).toBeGreaterThan(0);
    for (const s of i.stepCompletedTimes.keys()) expect(i.activeStepIds).not.toContain(s);
  }
  for (const wf of [...new Set(now.map((i) => i.processId))]) {
    const count = async (query: string): Promise<number> =>
      (
        JSON.parse(
          (await send(sb.port, "GET", `/api/v2/processes/${wf}/instances/?page_size=1${query}`, undefined, admin)).body,
        ) as { count: number }
      ).count;
    const [running, completed, aborted, total] = [
      await count("&status=running"),
      await count("&status=completed"),
      await count("&status=aborted"),
      await count(""),
    ];
    const mine = now.filter((i: InstanceState) => i.processId === wf);
    expect(running + completed + aborted).toBe(total);
    expect(total).toBe(mine.length);
    expect(aborted).toBe(mine.filter((i) => i.abortedTime !== null).length);
    expect(running).toBe(mine.filter((i) => i.abortedTime === null && i.completedTime === null).length);
  }
}

describe("the sandbox under abuse", () => {
  it("malformed bodies, media types, methods and paths: always a JSON answer, never a crash", async () => {
    const ids = sb.store.ids();
    const path = fc.oneof(
      fc.constantFrom(
        "/api/instances/bulk/abort",
        "/api/processes/",
        "/api/v2/processes/1042/instances/",
        "/__sandbox/requests",
        "/track/x",
        "/api",
      ),
      fc.nat(ids.length - 1).map((i) => `/api/instances/${ids[i] ?? 0}/complete_step/`),
      fc.string({ maxLength: 30 }).map((s) => `/api/${encodeURIComponent(s)}`),
      fc.constantFrom(
        "/api/instances/99999999999999999999999/",
        "/api/v2/processes/-1/instances/?page_size=-5&status=nope&cursor=%ZZ",
        "/api/processes/1042/steps/20111/actions/50222/?instance_ids=a,b,%00&page=0",
      ),
    );
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.constantFrom(
        "",
        "{",
        "[".repeat(5000),
        '{"step_id": 20111, "actions": [{"action_id": 50230}]}',
        '{"ids": [1, "2", null]}',
        "ids=1&ids=x",
        '--b\r\nContent-Disposition: form-data; name="ids"\r\n\r\n1\r\n--b--',
        "\u0000\ud800",
      ),
    );
    const type = fc.constantFrom(
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=b",
      "multipart/form-data",
      "text/plain",
      "application/json; charset=latin1",
      "",
      "application/vnd.api+json",
    );
    const method = fc.constantFrom("POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD");
    const key = fc.constantFrom(
      "Api-Key sandbox-admin",
      "Api-Key sandbox-outsider",
      "Api-Key ",
      "Bearer x",
      "",
      "Api-Key sandbox-admin extra",
    );
    await fc.assert(
      fc.asyncProperty(method, path, body, type, key, async (m, p, b, t, k) => {
        const headers: Record<string, string> = {};
        if (t) headers["content-type"] = t;
        if (k) headers.authorization = k;
        const r = await send(sb.port, m, p, m === "GET" || m === "HEAD" ? undefined : b, headers);
        expect(r.status).toBeGreaterThanOrEqual(200);
        expect(r.status).toBeLessThan(500);
        if (m !== "HEAD" && r.status >= 400) expectJsonError(r);
        if (m !== "HEAD" && r.status < 300 && r.body !== "") expect(() => JSON.parse(r.body) as unknown).not.toThrow();
      }),
      { numRuns: Number(process.env.FLOWRULES_FC_RUNS ?? 300) },
    );
    await expectConsistent();
    // raw protocol garbage
    expect(await raw("THIS IS NOT HTTP\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 .*\r\n[\s\S]*"detail"/);
    expect(await raw(`GET /api/processes/ HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 431 /,
    );
    expect(
      await raw(
        "POST /api/instances/bulk/abort HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      ),
    ).toMatch(/^HTTP\/1\.1 400 /);
    await stillServing();
  }, 60_000);

  it("bodies over 1 MB are 413 JSON on every path; far larger ones are cut off; the data is untouched", async () => {
    const id = sb.store.ids()[0] ?? 0;
    const before = JSON.stringify(sb.store.get(id), (_k, v: unknown) => (v instanceof Map ? [...v] : v));
    const big = JSON.stringify({
      step_id: 20111,
      actions: [{ action_id: 50230, input_object: { inputValue: "x".repeat(1_100_000) } }],
    });
    for (const p of [
      `/api/instances/${id}/complete_step/`,
      "/api/instances/bulk/abort",
      "/api/processes/",
      "/__sandbox/requests",
      "/elsewhere",
    ]) {
      const r = await send(sb.port, "POST", p, big, { ...admin, "content-type": "application/json" });
      if (p.startsWith("/api")) {
        expect(r.status, p).toBe(413);
        expectJsonError(r);
      } else {
        expect([404, 405]).toContain(r.status);
      }
    }
    // chunked, no length announced
    const chunked = await new Promise<Reply>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: sb.port,
          method: "POST",
          path: "/api/instances/bulk/abort",
          headers: { ...admin, "content-type": "application/json", connection: "close" },
          agent: false,
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body: text }));
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 20; i++) req.write(Buffer.alloc(100_000, 0x20));
      req.end();
    });
    expect(chunked.status).toBe(413);
    // 70 MB: beyond what the sandbox drains; it drops the connection rather than read on
    const dropped = await send(sb.port, "POST", "/api/instances/bulk/abort", Buffer.alloc(70 * 1024 * 1024, 0x20), {
      ...admin,
      "content-type": "application/json",
    }).then(
      (r) => r.status,
      () => 0,
    );
    expect([0, 413]).toContain(dropped);
    expect(JSON.stringify(sb.store.get(id), (_k, v: unknown) => (v instanceof Map ? [...v] : v))).toBe(before);
    await stillServing();
  }, 60_000);

  it("a thousand concurrent connections are all answered", async () => {
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const one = (i: number): Promise<number> =>
      new Promise((resolve) => {
        const path =
          i % 3 === 0
            ? "/api/processes/"
            : i % 3 === 1
              ? "/api/v2/processes/1042/instances/?page_size=5"
              : `/api/instances/${sb.store.ids()[i % 50] ?? 0}/`;
        const req = request({ host: "127.0.0.1", port: sb.port, path, headers: admin, agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", () => resolve(-1));
        req.end();
      });
    sb.clearRequests();
    const statuses = await Promise.all(Array.from({ length: 1000 }, (_, i) => one(i)));
    agent.destroy();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(sb.requests().filter((r) => r.path.startsWith("/api"))).toHaveLength(1000);
    await stillServing();
  }, 60_000);

  it("slow clients: while 200 sockets trickle headers, others are served; the server cuts them off (408)", async () => {
    // the sandbox's own server has explicit timeouts, far below Node's defaults
    expect(SERVER_TIMEOUTS.headersMs).toBeLessThanOrEqual(10_000);
    expect(SERVER_TIMEOUTS.requestMs).toBeLessThanOrEqual(30_000);
    // the same server, with timeouts short enough to watch them act
    const store = new SandboxStore({ seed: 3, instances: 20 });
    const server = createSandboxServer(
      { store, log: new RequestLog(), faults: new Faults(3, {}), cursors: new CursorCodec(3) },
      { headersMs: 400, requestMs: 800, checkEveryMs: 50 },
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    expect(server.headersTimeout).toBe(400);
    expect(server.requestTimeout).toBe(800);
    const sockets: Socket[] = [];
    try {
      const cutOff = Array.from(
        { length: 200 },
        (_, i) =>
          new Promise<string>((resolve) => {
            const s = connect(port, "127.0.0.1", () =>
              s.write(
                i % 2 === 0
                  ? "GET /api/processes/ HTTP/1.1\r\nHost: x\r\n"
                  : "POST /api/instances/bulk/abort HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{",
              ),
            );
            sockets.push(s);
            let got = "";
            // trickle a header byte now and then, never finishing
            const drip = setInterval(() => s.writable && s.write(i % 2 === 0 ? "X-Slow: 1\r\n" : " "), 100);
            s.on("data", (d: Buffer) => (got += d.toString()));
            s.on("close", () => (clearInterval(drip), resolve(got)));
            s.on("error", () => undefined);
          }),
      );
      // meanwhile, ordinary requests are answered
      for (let i = 0; i < 20; i++)
        expect((await send(port, "GET", "/api/processes/", undefined, admin)).status).toBe(200);
      const answers = await Promise.all(cutOff);
      // every slow socket was closed by the server; those still sending headers with a 408 JSON answer
      expect(answers.filter((a) => a.startsWith("HTTP/1.1 408")).length).toBeGreaterThanOrEqual(100);
      for (const a of answers.filter((x) => x !== "")) expect(a).toMatch(/^HTTP\/1\.1 (408|400)[\s\S]*"detail"/);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    }
  }, 30_000);

  it("a storm of concurrent, conflicting and broken mutations leaves the data consistent", async () => {
    const random = prng(33);
    const all = sb.store.list();
    const running = all.filter((i) => i.completedTime === null && i.abortedTime === null);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)] as T;
    sb.setFaults({ resetRate: 0.2 });
    sb.clearRequests();
    const requests: Array<Promise<unknown>> = [];
    for (let i = 0; i < 600; i++) {
      const inst = pick(running);
      const r = random();
      const body =
        r < 0.4
          ? JSON.stringify({
              step_id: inst.activeStepIds[0] ?? 1,
              actions: [],
              mode: random() < 0.5 ? "save" : "complete",
            })
          : r < 0.6
            ? JSON.stringify({ ids: [inst.id, pick(running).id, 1, inst.id] })
            : r < 0.8
              ? '{"step_id": '
              : JSON.stringify({ step_id: "x" });
      const path = r >= 0.4 && r < 0.6 ? "/api/instances/bulk/abort" : `/api/instances/${inst.id}/complete_step/`;
      requests.push(
        send(sb.port, "POST", path, body, { ...admin, "content-type": "application/json" }).catch(() => undefined),
      );
      if (i % 5 === 0)
        requests.push(
          send(
            sb.port,
            "GET",
            "/api/v2/processes/1043/instances/?status=running&page_size=500",
            undefined,
            admin,
          ).catch(() => undefined),
        );
    }
    await Promise.all(requests);
    sb.setFaults({ resetRate: 0 });

    await expectConsistent();
    // every step completion and abort in the log happened once and shows in the state
    const log = sb.requests();
    const effective = log.filter(
      (r) => r.method === "POST" && ((r.status >= 200 && r.status < 300) || r.reset === true),
    );
    const completions = new Map<string, number>();
    for (const r of effective) {
      const m = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
      const b = r.body as { step_id?: number; mode?: string };
      if (m && b.mode === "complete")
        completions.set(`${m[1]}:${b.step_id}`, (completions.get(`${m[1]}:${b.step_id}`) ?? 0) + 1);
    }
    expect([...completions.values()].filter((n) => n > 1)).toEqual([]);
    for (const key of completions.keys()) {
      const [id, step] = key.split(":").map(Number) as [number, number];
      expect(sb.store.get(id)?.stepCompletedTimes.has(step), key).toBe(true);
    }
    expect(log.some((r) => r.reset === true)).toBe(true);
    expect(log.some((r) => r.status === 400)).toBe(true);
    await stillServing();
  }, 60_000);
});

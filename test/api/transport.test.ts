/**
 * Client behaviour the sandbox cannot produce: slow servers, HTML error pages, bodies that fail the schema, truncated
 * JSON, foreign next links, refused connections. Each case runs a tiny node:http server on 127.0.0.1:0.
 */
import { describe, expect, it } from "vitest";
import {
  ApiError,
  FlowrulesApiError,
  OutcomeUnknownError,
  ResponseShapeError,
  TransportError,
  UnsafeLinkError,
  createClient,
} from "../../src/api/index.js";
import { VERSION } from "../../src/model/version.js";
import { closedPort, sendJson, localHarness } from "./helpers.js";

const KEY = "tk-7f3a9c1e-unique-transport-key";
const { server, client } = localHarness({ apiKey: KEY, rateLimitPerMin: 0, retryBaseMs: 5, timeoutMs: 2_000 });

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

const record = { id: 5, name: "Claim 5", active_step_ids: [20111], process_snapshot: { id: 1042, steps: [] } };

describe("requests on the wire", () => {
  it("sends the key, user agent, accept and JSON body; accepts a trailing slash on the base URL", async () => {
    const s = await server((_req, res) =>
      sendJson(res, 200, record, { "content-type": "application/json; version=v1" }),
    );
    const { c } = client(`${s.baseUrl}/`);
    expect(c.baseUrl).toBe(s.baseUrl);
    const body = {
      step_id: 20111,
      actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }],
      mode: "save" as const,
    };
    const rec = await c.completeStep(5, body);
    expect(rec.id).toBe(5);
    await c.getInstance(5, { injectValues: true, stepsTimeFrame: true });
    const [post, get] = s.requests;
    expect(post?.method).toBe("POST");
    expect(post?.url).toBe("/api/instances/5/complete_step/");
    expect(post?.headers.authorization).toBe(`Api-Key ${KEY}`);
    expect(post?.headers["user-agent"]).toBe(`flowrules/${VERSION} (node ${process.versions.node})`);
    expect(post?.headers.accept).toBe("application/json");
    expect(post?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(post?.body ?? "")).toEqual(body);
    expect(get?.url).toBe("/api/instances/5/?inject_values=true&steps_time_frame=true");
  });

  it("posts bulk abort without a trailing slash and sends nothing for an empty list", async () => {
    const s = await server((_req, res, body) => sendJson(res, 200, JSON.parse(body)));
    const { c } = client(s.baseUrl);
    expect(await c.bulkAbort([])).toEqual({ ids: [] });
    expect(await c.bulkAbort([3, 4])).toEqual({ ids: [3, 4] });
    expect(s.requests.map((r) => r.url)).toEqual(["/api/instances/bulk/abort"]);
  });
});

describe("timeouts and connection failures", () => {
  it("a GET that times out is retried, then fails with TransportError", async () => {
    const s = await server(() => undefined); // never answers
    const { c, events } = client(s.baseUrl, { timeoutMs: 150, maxAttempts: 3 });
    const t0 = Date.now();
    const err = await caught(c.getInstance(5));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toMatch(/^reading instance 5: timed out after 150 ms \(3 attempts\)$/);
    expect(s.requests.length).toBe(3);
    expect(events.filter((e) => e.type === "retry").length).toBe(2);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(c.stats().byEndpoint.getInstance).toEqual({ ok: 0, failed: 3, retries: 2 });
  });

  it("a POST that times out is OutcomeUnknown, carries the body, and is sent exactly once", async () => {
    const s = await server(() => undefined);
    const { c } = client(s.baseUrl, { timeoutMs: 150 });
    const body = { step_id: 20111, mode: "complete" as const };
    const err = await caught(c.completeStep(9, body));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    const e = err as OutcomeUnknownError;
    expect(e.body).toEqual(body);
    expect(e.path).toBe("/instances/9/complete_step/");
    expect(e.message).toMatch(/outcome unknown \(timed out after 150 ms\)/);
    expect(s.requests.length).toBe(1);
    expect(c.stats().outcomeUnknown).toBe(1);
  });

  it("a POST reset by the server after sending is OutcomeUnknown, sent once", async () => {
    const s = await server((req) => {
      req.socket.destroy();
    });
    const { c } = client(s.baseUrl);
    const err = await caught(c.bulkAbort([1, 2]));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).body).toEqual({ ids: [1, 2] });
    expect(s.requests.length).toBe(1);
  });

  it("a POST to a refused port surely never left: it is retried, then TransportError with neverSent", async () => {
    const port = await closedPort();
    const { c, events } = client(`http://127.0.0.1:${port}/api`, { maxAttempts: 3 });
    const err = await caught(c.completeStep(1, { step_id: 2 }));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).neverSent).toBe(true);
    expect((err as TransportError).reason).toMatch(/ECONNREFUSED/);
    expect(events.filter((e) => e.type === "retry").length).toBe(2);
    expect(c.stats().total).toBe(3);
  });

  it("a POST answered 503 is OutcomeUnknown (a gateway may have passed it on), never retried", async () => {
    const s = await server((_req, res) => sendJson(res, 503, { detail: "upstream unavailable" }));
    const { c } = client(s.baseUrl);
    const err = await caught(c.completeStep(3, { step_id: 4 }));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).status).toBe(503);
    expect(s.requests.length).toBe(1);
  });
});

describe("error answers", () => {
  it("a GET 502 HTML page is retried, then an ApiError with a short excerpt, not the page", async () => {
    const html =
      "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>" + "x".repeat(5000) + "</body></html>";
    const s = await server((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end(html);
    });
    const { c } = client(s.baseUrl, { maxAttempts: 2 });
    const err = await caught(c.listWorkflows());
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(502);
    expect(e.detail).toBe("502 Bad Gateway");
    expect(e.message).toBe("listing workflows: 502 Bad Gateway: 502 Bad Gateway");
    expect(e.attempts).toBe(2);
    expect(s.requests.length).toBe(2);
  });

  it("GET retries honour a 503's Retry-After and stop at maxRetryTimeMs", async () => {
    const s = await server((_req, res) => sendJson(res, 503, { detail: "busy" }, { "retry-after": "0.3" }));
    const { c, events } = client(s.baseUrl, { maxAttempts: 10, maxRetryTimeMs: 1050 });
    const err = await caught(c.getInstance(1));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).attempts).toBe(4); // 3 waits of 300 ms fit in 1050 ms, a 4th does not
    expect(s.requests.length).toBe(4);
    expect(events.filter((e) => e.type === "retry").map((e) => (e.type === "retry" ? e.delayMs : 0))).toEqual([
      300, 300, 300,
    ]);
  });

  it("a 400 carries the service's detail and is not retried", async () => {
    const s = await server((_req, res) => sendJson(res, 400, { detail: "step 20111 is not active" }));
    const { c } = client(s.baseUrl);
    const err = await caught(c.completeStep(5, { step_id: 20111 }));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe(
      "completing step 20111 of instance 5: 400 Bad Request: step 20111 is not active",
    );
    expect(s.requests.length).toBe(1);
  });

  it("429 with an HTTP-date Retry-After pauses every caller, then succeeds (POST included)", async () => {
    let refused = false;
    const arrived: Array<{ method: string; at: number }> = [];
    const s = await server((req, res) => {
      arrived.push({ method: req.method ?? "", at: Date.now() });
      if (!refused) {
        refused = true;
        const now = new Date();
        const later = new Date(now.getTime() + 1000);
        return sendJson(
          res,
          429,
          { detail: "slow down" },
          { "retry-after": later.toUTCString(), date: now.toUTCString() },
        );
      }
      return req.method === "POST" ? sendJson(res, 200, { ids: [1] }) : sendJson(res, 200, []);
    });
    const { c, events } = client(s.baseUrl, { concurrency: 1 });
    const t0 = Date.now();
    const [a, b] = await Promise.all([c.bulkAbort([1]), c.listWorkflows()]);
    expect(a).toEqual({ ids: [1] });
    expect(b).toEqual([]);
    // Retry-After is read against the server's Date header: exactly 1 s although toUTCString drops milliseconds
    expect(events).toContainEqual({ type: "rate-limited", delayMs: 1000, source: "server" });
    expect(arrived.map((r) => r.method).sort()).toEqual(["GET", "POST", "POST"]);
    // the GET, which was not refused itself, waited out the pause too
    const refusedAt = arrived[0]?.at ?? 0;
    for (const r of arrived.slice(1)) expect(r.at - refusedAt).toBeGreaterThanOrEqual(900);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(c.stats().rateLimited).toBe(1);
  });
});

describe("response shape", () => {
  it("a 200 whose body does not fit names the endpoint and the JSON path", async () => {
    const s = await server((_req, res) => sendJson(res, 200, { ...record, active_step_ids: ["20111"] }));
    const { c } = client(s.baseUrl);
    const err = await caught(c.getInstance(5));
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as ResponseShapeError).message).toMatch(
      /^reading instance 5: the answer does not match the instance record at \$\.active_step_ids\[0\]: expected number/,
    );
    expect((err as ResponseShapeError).jsonPath).toBe("$.active_step_ids[0]");
    expect(s.requests.length).toBe(1);
  });

  it("a 200 with an HTML body is a ResponseShapeError, not a crash", async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><head><title>Login</title></head></html>");
    });
    const { c } = client(s.baseUrl);
    const err = await caught(c.listWorkflows());
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as Error).message).toMatch(
      /^listing workflows: response is not JSON \(content-type text\/html\): Login/,
    );
  });

  it("truncated JSON is a ResponseShapeError", async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"count": 3, "next": null, "results": [{"id": 1, "na');
    });
    const { c } = client(s.baseUrl);
    const err = await caught(c.instancePages(1).next());
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as Error).message).toMatch(/^listing instances of workflow 1, page 1: response is not valid JSON/);
  });

  it("a body cut short (content-length not reached) is retried for a GET", async () => {
    const s = await server((_req, res, _b, n) => {
      if (n === 1) {
        res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
        res.write('[{"id": 1');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      sendJson(res, 200, [{ id: 1, name: "W" }]);
    });
    const { c } = client(s.baseUrl);
    expect(await c.listWorkflows()).toEqual([{ id: 1, name: "W" }]);
    expect(s.requests.length).toBe(2);
  });
});

describe("pagination safety", () => {
  it("follows a next link naming another host on the configured origin: the key never goes there", async () => {
    const other = await server((_req, res) =>
      sendJson(res, 200, { count: 0, next: null, previous: null, results: [] }),
    );
    const s = await server((req, res) =>
      new URL(req.url ?? "", "http://x").searchParams.get("cursor") === "abc"
        ? sendJson(res, 200, {
            count: 2,
            next: null,
            previous: null,
            results: [{ id: 2, name: "b", status: "running" }],
          })
        : sendJson(res, 200, {
            count: 2,
            next: `${other.origin}/api/v2/processes/1/instances/?cursor=abc`,
            previous: null,
            results: [{ id: 1, name: "a", status: "running" }],
          }),
    );
    const { c } = client(s.baseUrl);
    const seen: number[] = [];
    for await (const item of c.instances(1)) seen.push(item.id);
    expect(seen).toEqual([1, 2]);
    expect(s.requests.map((r) => r.url)[1]).toBe("/api/v2/processes/1/instances/?cursor=abc");
    expect(other.requests.length).toBe(0);
  });

  it("refuses a next link whose path leaves the API, in one line naming the listing", async () => {
    const s = await server((_req, res) =>
      sendJson(res, 200, {
        count: 2,
        next: "http://127.0.0.1:1/admin/export/?cursor=abc",
        previous: null,
        results: [{ id: 1, name: "a", status: "running" }],
      }),
    );
    const { c } = client(s.baseUrl);
    const seen: number[] = [];
    const err = await caught(
      (async () => {
        for await (const item of c.instances(1)) seen.push(item.id);
      })(),
    );
    expect(err).toBeInstanceOf(UnsafeLinkError);
    expect((err as Error).message).toBe(
      "listing instances of workflow 1, page 1: refusing to follow the next link to /admin/export/: its path leaves the API (/api)",
    );
    expect(seen).toEqual([1]);
    expect(s.requests.length).toBe(1);
  });

  it("follows relative and absolute next links under the base URL, clamping page_size to 500", async () => {
    const s = await server((req, res) => {
      const url = new URL(req.url ?? "", "http://x");
      const cursor = url.searchParams.get("cursor");
      if (!cursor)
        return sendJson(res, 200, {
          count: 3,
          next: "/api/v2/processes/7/instances/?cursor=2",
          previous: null,
          results: [{ id: 1, name: "a", status: "running" }],
        });
      if (cursor === "2")
        return sendJson(res, 200, {
          count: 3,
          next: `http://${req.headers.host}/api/v2/processes/7/instances/?cursor=3`,
          previous: null,
          results: [{ id: 2, name: "b", status: "completed" }],
        });
      return sendJson(res, 200, {
        count: 3,
        next: null,
        previous: null,
        results: [{ id: 3, name: "c", status: "aborted" }],
      });
    });
    const { c } = client(s.baseUrl);
    const ids: number[] = [];
    for await (const it of c.instances(7, { page_size: 9000, status: ["running", "completed"], tags: ["a", "b"] }))
      ids.push(it.id);
    expect(ids).toEqual([1, 2, 3]);
    expect(s.requests[0]?.url).toBe(
      "/api/v2/processes/7/instances/?page_size=500&status=running&status=completed&tags=a%2Cb",
    );
    expect(s.requests.map((r) => r.url).slice(1)).toEqual([
      "/api/v2/processes/7/instances/?cursor=2",
      "/api/v2/processes/7/instances/?cursor=3",
    ]);
  });

  it("stops a server that links a page to itself", async () => {
    const s = await server((req, res) =>
      sendJson(res, 200, {
        count: 9,
        next: `/api${(req.url ?? "").slice(4)}`,
        previous: null,
        results: [{ id: 1, name: "a", status: "running" }],
      }),
    );
    const { c } = client(s.baseUrl);
    const err = await caught(
      (async () => {
        for await (const _ of c.instancePages(3, { page_size: 1 })) void _;
      })(),
    );
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as Error).message).toMatch(/pagination loop/);
    expect(s.requests.length).toBe(1);
  });

  it("form-field pages are fetched concurrently but yielded in page order", async () => {
    const total = 23;
    const s = await server((req, res) => {
      const url = new URL(req.url ?? "", "http://x");
      const page = Number(url.searchParams.get("page"));
      const limit = Number(url.searchParams.get("limit"));
      const from = (page - 1) * limit;
      const results = Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, i) => ({
        instance_id: from + i + 1,
        instance_name: `i${from + i + 1}`,
        value: { inputValue: from + i },
        settings: {},
      }));
      const next = from + limit < total ? `/api/x?page=${page + 1}` : null;
      // later pages answer faster, so completion order differs from page order
      setTimeout(
        () => sendJson(res, 200, { count: total, next, previous: null, results }),
        page === 1 ? 0 : 120 - page * 15,
      );
    });
    const { c } = client(s.baseUrl, { concurrency: 4 });
    const pages: number[][] = [];
    for await (const p of c.formFieldPages(1042, 20111, 50222, { limit: 5, instance_ids: [1, 2] }))
      pages.push(p.results.map((r) => r.instance_id));
    expect(pages.flat()).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(pages.length).toBe(5);
    expect(c.stats().maxInFlight).toBeGreaterThan(1);
    expect(s.requests[0]?.url).toBe("/api/processes/1042/steps/20111/actions/50222/?limit=5&instance_ids=1%2C2&page=1");
  });
});

describe("the API key never leaks", () => {
  it("is absent from every error, event and stats, even when a server echoes it", async () => {
    const s = await server((req, res) => {
      const auth = String(req.headers.authorization);
      if (req.url?.includes("/instances/1/")) return sendJson(res, 403, { detail: `key ${auth} not allowed` });
      if (req.url?.includes("/instances/2/")) return sendJson(res, 200, { id: "x", note: auth });
      if (req.url?.includes("complete_step")) return sendJson(res, 503, { detail: `bad ${auth}` });
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`crash with ${auth}`);
    });
    const { c, events } = client(s.baseUrl, { maxAttempts: 2 });
    const errors = await Promise.all([
      caught(c.getInstance(1)),
      caught(c.getInstance(2)),
      caught(c.completeStep(3, { step_id: 1 })),
      caught(c.listWorkflows()),
    ]);
    try {
      createClient({ baseUrl: "http://remote.example/api", apiKey: KEY });
    } catch (e) {
      errors.push(e);
    }
    expect(errors.length).toBe(5);
    const port = await closedPort();
    const dead = client(`http://127.0.0.1:${port}/api`, { maxAttempts: 1 });
    errors.push(await caught(dead.c.getInstance(1)));
    for (const e of errors.slice(0, 4)) expect(e).toBeInstanceOf(FlowrulesApiError);
    const dump = JSON.stringify({
      messages: errors.map((e) =>
        e instanceof Error ? `${e.name} ${e.message} ${e.stack ?? ""} ${JSON.stringify(e)}` : String(e),
      ),
      events: [...events, ...dead.events],
      stats: [c.stats(), dead.c.stats()],
    });
    expect(dump).toContain("[REDACTED]"); // the echo was there, and was scrubbed
    expect(dump).not.toContain(KEY);
    expect(dump).not.toContain(KEY.slice(3, 20));
  });
});

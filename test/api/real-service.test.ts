/**
 * Listings end where the service says, or fail naming the listing: later-page 404s, "Invalid page.", counts the
 * pages do not reach, missing counts; and every error line names the request in words, short, without its URL.
 */
import { describe, expect, it } from "vitest";
import { ApiError, ResponseShapeError, type ApiClient, type Page } from "../../src/api/index.js";
import { sendJson, localHarness } from "./helpers.js";

const harness = localHarness({
  apiKey: "k-real-service-test",
  rateLimitPerMin: 0,
  retryBaseMs: 1,
  retryMaxDelayMs: 5,
  timeoutMs: 2_000,
});
const server = harness.server;
const client = (baseUrl: string): ApiClient => harness.client(baseUrl).c;

async function drain<T>(gen: AsyncIterable<Page<T>>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  try {
    for await (const page of gen) items.push(...page.results);
  } catch (error) {
    return { items, error };
  }
  return { items, error: undefined };
}

const value = (id: number): Record<string, unknown> => ({
  instance_id: id,
  value: { inputValue: id },
  settings: { type: "number" },
});

/** A form-field listing of `count` values, `size` a page; `page` answers override single pages. */
function fieldServer(
  count: number,
  size: number,
  override: (page: number, res: import("node:http").ServerResponse) => boolean = () => false,
) {
  return server((req, res) => {
    const url = new URL(req.url ?? "", "http://x");
    const page = Number(url.searchParams.get("page") ?? "1");
    if (override(page, res)) return;
    const start = (page - 1) * size;
    if (start >= count && page > 1) return sendJson(res, 404, { detail: "Invalid page." });
    const ids = Array.from({ length: Math.max(0, Math.min(size, count - start)) }, (_, i) => start + i + 1);
    url.searchParams.set("page", String(page + 1));
    sendJson(res, 200, {
      count,
      next: start + size < count ? `http://backend.internal:8000${url.pathname}${url.search}` : null,
      previous: null,
      results: ids.map(value),
    });
  });
}

const HTML_404 = "<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1><hr>nginx</body></html>";

describe("page-numbered listings (form-field values)", () => {
  it("a gateway's HTML 404 on page 3 is an error naming the listing, in words, not a shorter listing", async () => {
    const s = await fieldServer(25, 10, (page, res) => {
      if (page !== 3) return false;
      res.writeHead(404, { "content-type": "text/html" });
      res.end(HTML_404);
      return true;
    });
    const ids = Array.from({ length: 150 }, (_, i) => 100_000 + i);
    const { items, error } = await drain(
      client(s.baseUrl).formFieldPages(1042, 20111, 50222, { instance_ids: ids, limit: 10 }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message).toBe(
      "listing values of field 50222 (step 20111, workflow 1042), page 3: 404 Not Found: 404 Not Found",
    );
    expect((error as ApiError).path).toContain("instance_ids=100000%2C100001"); // the full request stays on the object
    expect(items).toHaveLength(20);
  });

  it("a 200 that is not JSON on a later page is an error too", async () => {
    const s = await fieldServer(25, 10, (page, res) => {
      if (page !== 2) return false;
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><title>Sign in</title></html>");
      return true;
    });
    const { error } = await drain(client(s.baseUrl).formFieldPages(1, 2, 3, { limit: 10 }));
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toMatch(
      /^listing values of field 3 \(step 2, workflow 1\), page 2: response is not JSON/,
    );
  });

  it('the service\'s own "Invalid page." ends the listing when the count is reached (the set shrank meanwhile)', async () => {
    // page 1 says 30, the set then shrinks to 20: page 2 says so and page 3 is past the end
    const s = await fieldServer(20, 10, (page, res) => {
      if (page !== 1) return false;
      sendJson(res, 200, {
        count: 30,
        next: "/api/processes/1/steps/2/actions/3/?page=2&limit=10",
        previous: null,
        results: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(value),
      });
      return true;
    });
    const { items, error } = await drain(client(s.baseUrl).formFieldPages(1, 2, 3, { limit: 10 }));
    expect(error).toBeUndefined();
    expect(items.map((v) => v.instance_id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('"Invalid page." before the count is reached is an error', async () => {
    const s = await fieldServer(30, 10, (page, res) => {
      if (page !== 2) return false;
      sendJson(res, 404, { detail: "Invalid page." });
      return true;
    });
    const { items, error } = await drain(client(s.baseUrl).formFieldPages(1, 2, 3, { limit: 10 }));
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toBe(
      'listing values of field 3 (step 2, workflow 1), page 2: the service answered "Invalid page." after 10 of the 30 results its count announced',
    );
    expect(items).toHaveLength(10);
  });

  it("pages adding up to less than the count are an error", async () => {
    const s = await fieldServer(25, 10, (page, res) => {
      if (page !== 3) return false;
      sendJson(res, 200, { count: 25, next: null, previous: null, results: [value(21)] });
      return true;
    });
    const { error } = await drain(client(s.baseUrl).formFieldPages(1, 2, 3, { limit: 10 }));
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toMatch(
      /page 3: the listing ended after 3 pages with 21 of the 25 results its count announced$/,
    );
  });

  it("without a count, pages are followed one by one until next is null", async () => {
    const s = await server((req, res) => {
      const page = Number(new URL(req.url ?? "", "http://x").searchParams.get("page") ?? "1");
      sendJson(res, 200, {
        next: page < 3 ? `https://localhost/api/processes/1/steps/2/actions/3/?page=${page + 1}` : null,
        previous: null,
        results: [value(page)],
      });
    });
    const { items, error } = await drain(client(s.baseUrl).formFieldPages(1, 2, 3));
    expect(error).toBeUndefined();
    expect(items.map((v) => v.instance_id)).toEqual([1, 2, 3]);
  });
});

describe("cursor listings (instances)", () => {
  const item = (id: number): Record<string, unknown> => ({ id, name: `i${id}`, status: "running" });

  it("a page without count is read, and the listing ends on next: null", async () => {
    const s = await server((req, res) => {
      const cursor = new URL(req.url ?? "", "http://x").searchParams.get("cursor");
      if (!cursor)
        return sendJson(res, 200, {
          next: "https://127.0.0.1/api/v2/processes/7/instances/?cursor=b",
          previous: null,
          results: [item(1)],
        });
      sendJson(res, 200, { next: null, previous: null, results: [item(2)] });
    });
    const { items, error } = await drain(client(s.baseUrl).instancePages(7));
    expect(error).toBeUndefined();
    expect(items.map((i) => i.id)).toEqual([1, 2]);
    expect(s.requests[1]?.url).toBe("/api/v2/processes/7/instances/?cursor=b");
  });

  it("a later 404 is an error naming the page; a listing short of its count is an error", async () => {
    const s = await server((req, res) => {
      const cursor = new URL(req.url ?? "", "http://x").searchParams.get("cursor");
      if (!cursor)
        return sendJson(res, 200, {
          count: 3,
          next: "http://backend.internal:8000/api/v2/processes/7/instances/?cursor=b",
          previous: null,
          results: [item(1)],
        });
      res.writeHead(404, { "content-type": "text/html" });
      res.end(HTML_404);
    });
    const { error } = await drain(client(s.baseUrl).instancePages(7));
    expect((error as Error).message).toBe("listing instances of workflow 7, page 2: 404 Not Found: 404 Not Found");

    const t = await server((_req, res) =>
      sendJson(res, 200, { count: 3, next: null, previous: null, results: [item(1)] }),
    );
    const short = await drain(client(t.baseUrl).instancePages(7));
    expect((short.error as Error).message).toBe(
      "listing instances of workflow 7, page 1: the listing ended after 1 page with 1 of the 3 results its count announced",
    );
  });
});

describe("one-line messages", () => {
  it("a value the schema rejects, in a request carrying 150 instance ids, is a short line without the URL", async () => {
    const s = await server((_req, res) =>
      sendJson(res, 200, { count: 1, next: null, previous: null, results: [{ instance_id: 1, value: "12.50" }] }),
    );
    const ids = Array.from({ length: 150 }, (_, i) => 100_000 + i);
    const { error } = await drain(client(s.baseUrl).formFieldPages(1042, 20111, 50222, { instance_ids: ids }));
    const message = (error as Error).message;
    expect(message).toBe(
      "listing values of field 50222 (step 20111, workflow 1042), page 1: the answer does not match a form-field page at $.results[0].value: expected record, received string",
    );
    expect(message.length).toBeLessThan(200);
  });

  it("a long detail from the service is cut", async () => {
    const s = await server((_req, res) => sendJson(res, 400, { detail: `bad ${"x".repeat(1000)}` }));
    const c = client(s.baseUrl);
    const err = await c.completeStep(5, { step_id: 20111, mode: "save", actions: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as Error).message).toMatch(/^saving step 20111 of instance 5: 400 Bad Request: bad x+…$/);
    expect((err as Error).message.length).toBeLessThan(200);
  });
});

import { describe, expect, it } from "vitest";
import { serializeQuery, withQuery, pathId } from "../../src/api/query.js";
import { normaliseBaseUrl, relativeLink, isLoopbackHost } from "../../src/api/url-guard.js";
import { backoffDelay, parseRetryAfter } from "../../src/api/retry.js";
import {
  InstanceRecordSchema,
  describeIssue,
  jsonPathOf,
  InstanceListItemSchema,
  pageSchema,
  FormFieldValueSchema,
} from "../../src/api/schemas.js";
import { InsecureUrlError, createClient, redact } from "../../src/api/index.js";

describe("query serialisation", () => {
  it("repeats status, comma-joins other arrays, omits null/undefined and empty arrays", () => {
    const qs = serializeQuery({
      status: ["running", "aborted"],
      tags: ["expenses", "q4"],
      ordering: ["-started_time", "name"],
      instance_ids: [1, 2, 3],
      priority: null,
      name: undefined,
      active_step_id: 20111,
      inject: true,
      empty: [],
    });
    expect(qs).toBe(
      "status=running&status=aborted&tags=expenses%2Cq4&ordering=-started_time%2Cname&instance_ids=1%2C2%2C3&active_step_id=20111&inject=true",
    );
    expect(withQuery("/x/", {})).toBe("/x/");
  });

  it("rejects path ids that could change the path", () => {
    expect(pathId("id", 5)).toBe("5");
    expect(() => pathId("id", -1)).toThrow(TypeError);
    expect(() => pathId("id", 1.5)).toThrow(TypeError);
    expect(() => pathId("id", Number.NaN)).toThrow(TypeError);
  });
});

describe("base URL and link guard", () => {
  it("normalises trailing slashes", () => {
    expect(normaliseBaseUrl("http://127.0.0.1:4010/api/", false).href).toBe("http://127.0.0.1:4010/api");
    expect(normaliseBaseUrl("https://host.example/api", false)).toEqual({
      href: "https://host.example/api",
      origin: "https://host.example",
      basePath: "/api",
    });
    expect(normaliseBaseUrl("https://host.example/", false).basePath).toBe("");
  });

  it("knows loopback hosts", () => {
    for (const h of ["127.0.0.1", "127.8.9.10", "localhost", "[::1]"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["128.0.0.1", "10.0.0.1", "example.com", "localhost.evil.com", "[::2]"])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it("refuses plain http to a remote host in createClient, before any request", () => {
    expect(() => createClient({ baseUrl: "http://api.example.com/api", apiKey: "k-123" })).toThrow(InsecureUrlError);
    expect(() => createClient({ baseUrl: "http://10.1.2.3:8080/api", apiKey: "k-123" })).toThrow(/10\.1\.2\.3:8080/);
    expect(() => createClient({ baseUrl: "ftp://host/api", apiKey: "k-123" })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: "https://u:p@host/api", apiKey: "k-123" })).toThrow(/credentials/);
  });

  it("allows http to a remote host when told to, and https always", async () => {
    const a = createClient({ baseUrl: "http://api.example.com/api/", apiKey: "k-123", insecureHttp: true });
    const b = createClient({ baseUrl: "https://api.example.com/api/", apiKey: "k-123" });
    expect(a.baseUrl).toBe("http://api.example.com/api");
    expect(b.baseUrl).toBe("https://api.example.com/api");
    await Promise.all([a.close(), b.close()]);
  });

  it("takes path and query of next links under the base path, whatever host they name, and refuses the rest", () => {
    const base = normaliseBaseUrl("https://h.example/api", false);
    expect(relativeLink(base, "https://h.example/api/v2/processes/1/instances/?cursor=abc")).toBe(
      "/v2/processes/1/instances/?cursor=abc",
    );
    expect(relativeLink(base, "/api/v2/processes/1/instances/?cursor=x")).toBe("/v2/processes/1/instances/?cursor=x");
    // the path is kept, the origin is always the configured one: the key never goes to the named host
    expect(relativeLink(base, "http://backend.internal:8000/api/v2/?cursor=x")).toBe("/v2/?cursor=x");
    expect(relativeLink(base, "http://h.example/api/v2/?cursor=x")).toBe("/v2/?cursor=x");
    expect(relativeLink(base, "https://evil.example/api/v2/?cursor=x")).toBe("/v2/?cursor=x");
    expect(relativeLink(base, "?page=2", "/processes/1/steps/2/actions/3/?page=1")).toBe(
      "/processes/1/steps/2/actions/3/?page=2",
    );
    expect(relativeLink(base, "https://h.example/other/v2/")).toBeNull();
    expect(relativeLink(base, "https://h.example/apix/v2/")).toBeNull();
    expect(relativeLink(base, "https://h.example/api/../admin/")).toBeNull();
    expect(relativeLink(base, "javascript:alert(1)")).toBeNull();
  });
});

describe("retry timing", () => {
  it("parses Retry-After as seconds or HTTP date (relative to the server's Date)", () => {
    expect(parseRetryAfter("3", undefined)).toBe(3000);
    expect(parseRetryAfter("0.5", undefined)).toBe(500);
    const date = "Wed, 21 Oct 2015 07:28:00 GMT";
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:07 GMT", date)).toBe(7000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:07 GMT", undefined, Date.parse(date) + 2000)).toBe(5000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", date)).toBe(0);
    expect(parseRetryAfter("soon", undefined)).toBeUndefined();
    expect(parseRetryAfter(undefined, undefined)).toBeUndefined();
  });

  it("backs off exponentially with full jitter, capped", () => {
    expect(backoffDelay(1, 100, 10_000, () => 1)).toBe(100);
    expect(backoffDelay(4, 100, 10_000, () => 1)).toBe(800);
    expect(backoffDelay(20, 100, 10_000, () => 1)).toBe(10_000);
    expect(backoffDelay(4, 100, 10_000, () => 0)).toBe(0);
    expect(backoffDelay(4, 100, 10_000, () => 0.5)).toBe(400);
  });
});

describe("schemas", () => {
  it("names the JSON path of the first mismatch", () => {
    const r = InstanceRecordSchema.safeParse({ id: 5, active_step_ids: ["x"] });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(describeIssue(r.error)).toEqual({
        jsonPath: "$.active_step_ids[0]",
        problem: expect.stringMatching(/^expected number/),
      });
    expect(jsonPathOf(["results", 3, "a-b"])).toBe('$.results[3]["a-b"]');
  });

  it("is tolerant: nulls, absent fields and unknown fields are fine and kept", () => {
    const rec = InstanceRecordSchema.parse({
      id: 7,
      completed_time: null,
      extra: { a: 1 },
      process_snapshot: { steps: [{ id: 1, future: true }] },
    });
    expect(rec.extra).toEqual({ a: 1 });
    expect(rec.process_snapshot?.steps?.[0]?.future).toBe(true);
    expect(InstanceListItemSchema.parse({ id: 1, name: null, status: "running" }).name).toBe("");
    expect(InstanceListItemSchema.safeParse({ id: 1, name: "x", status: "paused" }).success).toBe(false);
    expect(FormFieldValueSchema.parse({ instance_id: 1, value: null }).value).toBeNull();
    const page = pageSchema(InstanceListItemSchema).parse({ count: 0, results: [] });
    expect(page).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("redacts secrets", () => {
    expect(redact("Api-Key s3cr3t-key and s3cr3t-key", "s3cr3t-key")).toBe("Api-Key [REDACTED] and [REDACTED]");
  });
});

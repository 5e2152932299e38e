/**
 * Hostile API responses — wrong types, missing fields, HTML error pages, truncated JSON, a 200 with garbage, bodies
 * cut short, huge bodies — from a small server on 127.0.0.1 in front of the sandbox. The client always ends in a clear
 * error (never a crash, never garbage passed on as data), and apply never silently takes a garbage answer for a
 * change applied: it decides by reading, journals what it could not decide, and exits 1.
 */
import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, FlowrulesApiError, type ApiClient } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  ABORT_RULES,
  captureIO,
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "../apply/helpers.js";
import { startHostileProxy, type Answer, type Exchange, type HostileProxy, type Hostility } from "./hostile-proxy.js";

let sb: RunningSandbox | undefined;
let proxy: HostileProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await sb?.close();
  proxy = undefined;
  sb = undefined;
});

async function setUp(instances = 120, seed = 9): Promise<{ sb: RunningSandbox; proxy: HostileProxy }> {
  sb = await startSandbox({ port: 0, instances, seed });
  proxy = await startHostileProxy(sb.origin);
  return { sb, proxy };
}

/** The sandbox seen through the proxy: plans and applies go to the proxy's base URL. */
const via = (s: RunningSandbox, p: HostileProxy): RunningSandbox => ({ ...s, baseUrl: p.baseUrl });

const HTML =
  '<!DOCTYPE html><html><head><title>Sign in to the guest network</title></head><body><form action="/login">…</form></body></html>';
const html = (status = 200): Answer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8" },
  body: HTML,
});
const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

interface JournalLine {
  event: string;
  change?: string;
  reason?: string;
  outcome_unknown?: boolean;
}
async function journal(file: string): Promise<JournalLine[]> {
  return (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JournalLine);
}

// ---- the client on its own ---------------------------------------------------------------------------------------

const VALID: Record<string, unknown> = {
  workflows: [{ id: 1042, name: "Expense claim" }],
  page: { count: 1, next: null, previous: null, results: [{ id: 1, name: "x", status: "running" }] },
  record: { id: 1, active_step_ids: [20111], process_snapshot: { id: 1042, steps: [{ id: 20111, actions: [] }] } },
  fields: { count: 1, next: null, previous: null, results: [{ instance_id: 1, value: { inputValue: 3 } }] },
  abort: { ids: [1] },
};

/** `name`: what the one-line error says the request asked, in words */
type Call = { name: string; shape: keyof typeof VALID; run: (c: ApiClient) => Promise<unknown> };
const CALLS: Call[] = [
  { name: "listing workflows", shape: "workflows", run: (c) => c.listWorkflows() },
  {
    name: "listing instances of workflow 1042, page 1",
    shape: "page",
    run: async (c) => {
      for await (const p of c.instancePages(1042)) return p;
      return undefined;
    },
  },
  { name: "reading instance 1", shape: "record", run: (c) => c.getInstance(1) },
  {
    name: "listing values of field 50222 (step 20111, workflow 1042), page 1",
    shape: "fields",
    run: async (c) => {
      for await (const p of c.formFieldPages(1042, 20111, 50222)) return p;
      return undefined;
    },
  },
  {
    name: "completing step 20111 of instance 1",
    shape: "record",
    run: (c) => c.completeStep(1, { step_id: 20111, actions: [] }),
  },
  { name: "aborting 1 instance", shape: "abort", run: (c) => c.bulkAbort([1]) },
];

/** A valid answer with one value replaced (wrong type) or removed (missing field), somewhere in it. */
function mutated(v: unknown, pick: number, replacement: unknown, remove: boolean): unknown {
  const copy = JSON.parse(JSON.stringify(v)) as unknown;
  const slots: Array<{ parent: Record<string | number, unknown>; key: string | number }> = [];
  const walk = (x: unknown): void => {
    if (typeof x !== "object" || x === null) return;
    for (const [k, child] of Object.entries(x)) {
      slots.push({ parent: x as Record<string | number, unknown>, key: Array.isArray(x) ? Number(k) : k });
      walk(child);
    }
  };
  walk(copy);
  const slot = slots[pick % Math.max(1, slots.length)];
  if (!slot) return replacement;
  if (remove && !Array.isArray(slot.parent)) delete slot.parent[slot.key];
  else slot.parent[slot.key] = replacement;
  return copy;
}

describe("hostile API responses: the client", () => {
  it("any answer ends in data that fits or a one-line error naming the request, never a crash or a hang", async () => {
    ({ proxy } = await setUp(20));
    const p = proxy;
    // 429s are retried on time, not attempts: a small retry budget makes an endless 429 end at once. A fresh client
    // per answer: a 429 pauses the whole client, and the property is about one answer at a time
    const newClient = () =>
      createClient({
        baseUrl: p.baseUrl,
        apiKey: "sandbox-admin",
        rateLimitPerMin: 0,
        maxAttempts: 2,
        maxRetryTimeMs: 100,
        retryBaseMs: 1,
        retryMaxDelayMs: 5,
        timeoutMs: 3000,
      });
    let client = newClient();
    const body = fc.oneof(
      fc
        .record({ pick: fc.nat(), replacement: fc.jsonValue({ maxDepth: 2 }), remove: fc.boolean() })
        .map((m) => ({ kind: "mutated" as const, ...m })),
      fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: "json" as const, text: JSON.stringify(v) })),
      fc.nat().map((cut) => ({ kind: "truncated" as const, cut })),
      fc
        .constantFrom(
          HTML,
          "",
          "OK",
          "null",
          "<?xml version='1.0'?><error/>",
          "\u0000\u00ff\ufffd",
          '{"detail": "Internal error"',
        )
        .map((text) => ({ kind: "text" as const, text })),
    );
    const answer = fc.record({
      call: fc.nat(CALLS.length - 1),
      status: fc.constantFrom(200, 200, 200, 201, 204, 301, 400, 401, 403, 404, 429, 500, 502, 503, 504),
      type: fc.constantFrom(
        "application/json",
        "application/json; version=v1",
        "text/html; charset=utf-8",
        "text/plain",
        "application/problem+json",
        "",
      ),
      body,
      cut: fc.constantFrom("none", "none", "none", "truncate", "destroy"),
    });
    try {
      await fc.assert(
        fc.asyncProperty(answer, async (a) => {
          const call = CALLS[a.call] as Call;
          const valid = VALID[call.shape];
          const text =
            a.body.kind === "mutated"
              ? JSON.stringify(mutated(valid, a.body.pick, a.body.replacement, a.body.remove))
              : a.body.kind === "truncated"
                ? JSON.stringify(valid).slice(0, a.body.cut % JSON.stringify(valid).length)
                : a.body.text;
          const headers: Record<string, string> = a.type ? { "content-type": a.type } : {};
          if (a.status === 429) headers["retry-after"] = "0";
          const hostility: Hostility = {
            forward: false,
            answer: { status: a.status, headers, body: text },
            truncate: a.cut === "truncate",
            destroy: a.cut === "destroy",
          };
          p.setRule(() => hostility);
          await client.close();
          client = newClient();
          const outcome = await call.run(client).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          );
          if ("value" in outcome) {
            // only a complete 2xx JSON answer can be taken as data
            expect(a.cut).toBe("none");
            expect(a.status).toBeGreaterThanOrEqual(200);
            expect(a.status).toBeLessThan(300);
            expect(() => JSON.parse(text) as unknown).not.toThrow();
          } else {
            expect(outcome.error).toBeInstanceOf(FlowrulesApiError);
            const message = (outcome.error as Error).message;
            expect(message.startsWith(`${call.name}: `), message).toBe(true);
            expect(message).not.toMatch(/\n/);
            expect(message.length).toBeLessThan(300);
          }
        }),
        { numRuns: Number(process.env.FLOWRULES_FC_RUNS ?? 250) },
      );
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a 429 that asks to come back tomorrow fails the call, and the next ones at once, instead of holding them for a day", async () => {
    ({ proxy } = await setUp(20));
    proxy.setRule(() => ({
      forward: false,
      answer: json({ detail: "daily quota exhausted" }, 429, { "retry-after": "86400" }),
    }));
    const client = createClient({
      baseUrl: proxy.baseUrl,
      apiKey: "sandbox-admin",
      rateLimitPerMin: 0,
      maxRetryTimeMs: 5_000,
    });
    try {
      await expect(client.listWorkflows()).rejects.toThrow(
        /^listing workflows: 429 Too Many Requests: daily quota exhausted/,
      );
      await expect(client.getInstance(1)).rejects.toThrow(
        /not sent: the service asked to wait 86400 s \(Retry-After\), longer than the retry budget of 5 s/,
      );
      await expect(client.completeStep(1, { step_id: 20111 })).rejects.toThrow(
        /^completing step 20111 of instance 1: 429 .*not sent/,
      );
      expect(proxy.seen).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 20_000);

  it("pagination that never ends (a fresh next link, or results for every page number) is cut off with a clear error", async () => {
    ({ proxy } = await setUp(20));
    const p = proxy;
    p.setRule((ex) => {
      const n = Number(/cursor=(\d+)/.exec(ex.query)?.[1] ?? /page=(\d+)/.exec(ex.query)?.[1] ?? 1);
      if (ex.path.startsWith("/v2/")) {
        return {
          forward: false,
          answer: json({
            count: 2,
            next: `${p.baseUrl}${ex.path}?cursor=${n + 1}`,
            previous: null,
            results: [{ id: n, name: "x", status: "running" }],
          }),
        };
      }
      return {
        forward: false,
        answer: json({
          count: 2,
          next: `${p.baseUrl}${ex.path}?page=${n + 1}`,
          previous: null,
          results: [{ instance_id: n, value: null }],
        }),
      };
    });
    const client = createClient({ baseUrl: p.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const drain = async (pages: AsyncGenerator<unknown>): Promise<number> => {
      let n = 0;
      for await (const _ of pages) n += 1;
      return n;
    };
    try {
      await expect(drain(client.instancePages(1042))).rejects.toThrow(
        /^listing instances of workflow 1042, page \d+: pagination does not end: \d+ pages fetched for a count of 2/,
      );
      await expect(drain(client.formFieldPages(1042, 20111, 50222))).rejects.toThrow(
        /^listing values of field 50222 \(step 20111, workflow 1042\), page \d+: pagination does not end/,
      );
      // bounded: twice what the count needs, and ten more
      expect(p.seen.length).toBeLessThan(40);
    } finally {
      await client.close();
    }
  });

  it("a body larger than 64 MiB is cut off with a clear error instead of exhausting memory", async () => {
    ({ proxy } = await setUp(20));
    proxy.setRule(() => ({ forward: false, hugeBytes: 80 * 1024 * 1024 }));
    const client = createClient({
      baseUrl: proxy.baseUrl,
      apiKey: "sandbox-admin",
      rateLimitPerMin: 0,
      maxAttempts: 1,
    });
    try {
      await expect(client.listWorkflows()).rejects.toThrow(
        /^listing workflows: response body larger than 67108864 bytes/,
      );
      await expect(client.bulkAbort([1])).rejects.toThrow(/outcome unknown \(response body larger than 67108864 bytes/);
    } finally {
      await client.close();
    }
  }, 30_000);
});

// ---- apply against a hostile service ------------------------------------------------------------------------------

const isPost =
  (path: string) =>
  (ex: Exchange): boolean =>
    ex.method === "POST" && ex.path.endsWith(path);

describe("hostile API responses: apply", () => {
  it("a 200 HTML page instead of the step's record (nothing applied): decided by reading, never marked done; exit 1", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, MIXED_RULES.split("  - name: abort-onboardings")[0] ?? "");
    expect(plan.changes.length).toBeGreaterThan(0);
    // a captive portal answers every POST itself; reads reach the service
    p.setRule((ex) => (ex.method === "POST" ? { forward: false, answer: html() } : {}));
    s.clearRequests();
    const io = captureIO();
    const code = await runApply(via(s, p), dir, { paths: [file] }, io);
    expect(code, io.out()).toBe(1);
    expect(s.requests().filter((r) => r.method === "POST")).toEqual([]);
    const lines = await journal(`${file}.journal.jsonl`);
    expect(lines.filter((l) => l.event === "done")).toEqual([]);
    for (const c of plan.changes) {
      expect(
        lines.some(
          (l) =>
            l.event === "failed" && l.change === c.id && /answered 200 with an unexpected body/.test(l.reason ?? ""),
        ),
      ).toBe(true);
      expect(stateHolds(s, c)).toBe(false);
    }
    expect(io.out()).toMatch(/Apply incomplete: 0 changes applied, \d+ failed/);
    expect(io.out()).toMatch(/reading showed no effect each time, so it was not applied/);
  });

  it("a garbage or cut-short answer to a step that was applied: verified by reading, applied once; exit 2", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, MIXED_RULES.split("  - name: abort-onboardings")[0] ?? "");
    const answers: Hostility[] = [
      { answer: (u) => json({ ...(JSON.parse(u.body) as object), id: "not a number" }) },
      { answer: (u) => ({ ...u, body: u.body.slice(0, 40) }) },
      { answer: () => json({}) },
      { answer: () => html() },
      { truncate: true },
      { destroy: true },
      { answer: () => ({ status: 200, headers: { "content-type": "application/json" }, body: "" }) },
    ];
    let n = 0;
    p.setRule((ex) => (isPost("/complete_step/")(ex) ? (answers[n++ % answers.length] as Hostility) : {}));
    s.clearRequests();
    const io = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file] }, io), io.out()).toBe(2);
    const counts = effectiveMutations(s);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(stateHolds(s, c), c.id).toBe(true);
    }
    const lines = await journal(`${file}.journal.jsonl`);
    expect(lines.filter((l) => l.event === "done")).toHaveLength(plan.changes.length);
  });

  it("a bulk abort answered with garbage, and the check list too: reported, journalled as outcome unknown, exit 1; a rerun settles it without aborting twice", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, ABORT_RULES);
    expect(plan.changes.length).toBeGreaterThan(5);
    // the aborts reach the service and take effect; their answers and the list that would check them are garbage
    p.setRule((ex) => {
      if (isPost("/instances/bulk/abort")(ex)) return { answer: () => html(200) };
      if (ex.method === "GET" && ex.query.includes("aborted_time_after"))
        return { answer: () => json({ count: "many", results: "none" }) };
      return {};
    });
    s.clearRequests();
    const io = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file], batchSize: 4 }, io)).toBe(1);
    const lines = await journal(`${file}.journal.jsonl`);
    for (const c of plan.changes) {
      const failed = lines.find((l) => l.event === "failed" && l.change === c.id);
      expect(failed?.outcome_unknown, c.id).toBe(true);
      expect(failed?.reason).toMatch(
        /bulk abort outcome unknown \(answered 200 with an unexpected body\) and it could not be checked/,
      );
    }
    expect(io.out()).toMatch(/Apply incomplete: 0 changes applied, \d+ failed/);
    expect(io.out()).toMatch(
      /could not be checked: listing instances of workflow 1043, page 1: the answer does not match/,
    );
    const aborts = s.requests().filter((r) => r.method === "POST").length;
    expect(aborts).toBe(Math.ceil(plan.changes.length / 4));

    // the service behaves again: the open outcomes are decided by listing, nothing is aborted twice
    p.setRule(() => ({}));
    const io2 = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file], batchSize: 4 }, io2), io2.out()).toBe(2);
    expect(s.requests().filter((r) => r.method === "POST")).toHaveLength(aborts);
    const counts = effectiveMutations(s);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(stateHolds(s, c)).toBe(true);
    }
  });

  it("a bulk abort answered with garbage that aborted nothing: re-sent only after a list showed no effect, then failed; exit 1", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, ABORT_RULES);
    p.setRule((ex) =>
      isPost("/instances/bulk/abort")(ex) ? { forward: false, answer: json({ ids: "all of them" }) } : {},
    );
    s.clearRequests();
    const io = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file], batchSize: 100 }, io)).toBe(1);
    const lines = await journal(`${file}.journal.jsonl`);
    expect(lines.filter((l) => l.event === "done")).toEqual([]);
    expect(lines.filter((l) => l.event === "failed")).toHaveLength(plan.changes.length);
    // three sends, each after a list that showed nothing aborted
    expect(p.seen.filter(isPost("/instances/bulk/abort"))).toHaveLength(3);
    expect(p.seen.filter((ex) => ex.query.includes("aborted_time_after"))).toHaveLength(3);
    expect(io.out()).toMatch(/bulk abort outcome unknown 3 times .*not aborted as of the last check/);
    for (const c of plan.changes) expect(stateHolds(s, c)).toBe(false);
  });

  it("a 429 for a day on the first mutations: every change fails at once, no more requests than were in flight, exit 1", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, MIXED_RULES);
    p.setRule((ex) =>
      ex.method === "POST"
        ? { forward: false, answer: json({ detail: "daily quota exhausted" }, 429, { "retry-after": "86400" }) }
        : {},
    );
    s.clearRequests();
    const io = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file] }, io)).toBe(1);
    // the requests already in flight (--concurrency 4) got the 429; nothing was sent after it
    expect(p.seen.filter((ex) => ex.method === "POST").length).toBeLessThanOrEqual(4);
    expect(s.requests().filter((r) => r.method === "POST")).toEqual([]);
    const lines = await journal(`${file}.journal.jsonl`);
    expect(lines.filter((l) => l.event === "done")).toEqual([]);
    expect(lines.filter((l) => l.event === "failed")).toHaveLength(plan.changes.length);
    expect(io.out()).toMatch(/longer than the retry budget/);
  }, 30_000);

  it("garbage from the staleness list stops the run before any change is sent, with one clear error", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file } = await makePlan(via(s, p), dir, MIXED_RULES);
    for (const hostility of [
      { answer: () => html(200) },
      { answer: () => json({ count: 1, next: null, previous: null, results: [{ id: "1" }] }) },
      { truncate: true },
    ] satisfies Hostility[]) {
      p.setRule((ex) => (ex.method === "GET" && ex.query.includes("last_updated_time_after") ? hostility : {}));
      s.clearRequests();
      const outcome = await runApply(via(s, p), dir, { paths: [file] }).then(
        (code) => new Error(`exit ${code}`),
        (e: unknown) => e,
      );
      expect(outcome).toBeInstanceOf(FlowrulesApiError);
      expect((outcome as Error).message).toMatch(
        /^listing instances of workflow \d+, page \d+: .*(not JSON|does not match|closed|attempt)/,
      );
      expect(s.requests().filter((r) => r.method === "POST")).toEqual([]);
    }
  });

  it("unreadable instances while deciding an unknown outcome: that change is journalled as undecided, the others go on", async () => {
    const { sb: s, proxy: p } = await setUp();
    const dir = await tempDir();
    const { file, plan } = await makePlan(via(s, p), dir, MIXED_RULES.split("  - name: abort-onboardings")[0] ?? "");
    const victim = plan.changes[0]?.instance_id ?? -1;
    p.setRule((ex) => {
      if (ex.path === `/instances/${victim}/complete_step/`) return { destroy: true };
      if (ex.method === "GET" && ex.path === `/instances/${victim}/`)
        return { answer: () => json({ id: victim, active_step_ids: "?" }) };
      return {};
    });
    s.clearRequests();
    const io = captureIO();
    expect(await runApply(via(s, p), dir, { paths: [file] }, io)).toBe(1);
    const lines = await journal(`${file}.journal.jsonl`);
    const failed = lines.filter((l) => l.event === "failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ change: plan.changes[0]?.id, outcome_unknown: true });
    expect(lines.filter((l) => l.event === "done")).toHaveLength(plan.changes.length - 1);
    // the next run, with the service readable again, decides it by reading: applied once
    p.setRule(() => ({}));
    expect(await runApply(via(s, p), dir, { paths: [file] })).toBe(2);
    expect(
      effectiveMutations(s).get(changeKey(plan.changes[0] as { kind: string; instance_id: number; step_id?: number })),
    ).toBe(1);
  });
});

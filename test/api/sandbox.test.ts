/** The client against the real sandbox over HTTP: every endpoint, both paginations, faults, exactly-once POSTs. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  ApiError,
  OutcomeUnknownError,
  TransportError,
  createClient,
  type ApiClient,
  type ClientEvent,
  type ClientOptions,
  type InstanceListItem,
} from "../../src/api/index.js";

let sb: RunningSandbox;
const clients: ApiClient[] = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 300, seed: 7 });
});
afterAll(async () => {
  await sb.close();
});
afterEach(async () => {
  vi.useRealTimers();
  sb.setFaults({ latencyMs: 0, failRate: 0, rateLimitPerMin: 0, rateLimitWindowMs: 60_000, resetRate: 0 });
  sb.clearRequests();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(extra: Partial<ClientOptions> = {}, events: ClientEvent[] = []): ApiClient {
  const c = createClient({
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: 0,
    retryBaseMs: 5,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  clients.push(c);
  return c;
}

async function collect<T>(
  gen: AsyncIterable<{ results: T[]; count: number | null }>,
): Promise<{ items: T[]; counts: number[]; pages: number }> {
  const items: T[] = [];
  const counts: number[] = [];
  let pages = 0;
  for await (const page of gen) {
    items.push(...page.results);
    counts.push(page.count ?? -1);
    pages += 1;
  }
  return { items, counts, pages };
}

async function runningAt(c: ApiClient, stepId: number): Promise<InstanceListItem[]> {
  const out: InstanceListItem[] = [];
  for await (const it of c.instances(1042, { status: ["running"], active_step_id: stepId })) out.push(it);
  return out;
}

describe("endpoints", () => {
  it("lists workflows, and none for a key that sees none", async () => {
    const wfs = await client().listWorkflows();
    expect(wfs.map((w) => w.id)).toContain(1042);
    const expense = wfs.find((w) => w.id === 1042);
    expect(expense?.folder?.name).toBeTruthy();
    expect(expense?.url).toBe(`${sb.baseUrl}/processes/1042/`);
    expect(await client({ apiKey: "sandbox-outsider" }).listWorkflows()).toEqual([]);
    expect(sb.requests().map((r) => r.path)).toEqual(["/api/processes/", "/api/processes/"]);
  });

  it("cursor pagination: every instance once, item count equals the envelope count, 500 a page by default", async () => {
    const c = client();
    const small = await collect(c.instancePages(1042, { page_size: 9, ordering: ["-started_time"] }));
    const ids = small.items.map((i) => i.id);
    expect(ids.length).toBe(small.counts[0]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(small.pages).toBe(Math.ceil(ids.length / 9));
    expect(new Set(small.counts).size).toBe(1);

    sb.clearRequests();
    const big = await collect(c.instancePages(1042));
    expect(big.pages).toBe(1);
    expect(new Set(big.items.map((i) => i.id))).toEqual(new Set(ids));
    expect(sb.requests()[0]?.query).toMatchObject({ page_size: "500" });
  });

  it("filters go to the server: repeated status, comma-joined tags", async () => {
    const c = client();
    const { items, counts } = await collect(
      c.instancePages(1042, { status: ["running", "aborted"], tags: ["expenses"], page_size: 5 }),
    );
    expect(items.length).toBe(counts[0]);
    expect(items.every((i) => i.status === "running" || i.status === "aborted")).toBe(true);
    expect(sb.requests()[0]?.query).toMatchObject({ status: ["running", "aborted"], tags: "expenses", page_size: "5" });
  });

  it("gets an instance with injected values and step times", async () => {
    const c = client();
    const [first] = await runningAt(c, 20111);
    expect(first).toBeDefined();
    const rec = await c.getInstance(first?.id ?? 0, { injectValues: true, stepsTimeFrame: true });
    expect(rec.id).toBe(first?.id);
    expect(rec.active_step_ids).toContain(20111);
    expect(rec.process_snapshot?.steps?.map((s) => s.id)).toContain(20111);
    expect(sb.requests().at(-1)?.query).toEqual({ inject_values: "true", steps_time_frame: "true" });
    const missing = await c.getInstance(999_999_999).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect((missing as ApiError).path).toBe("/instances/999999999/");
  });

  it("saves, then completes a step; completing an inactive step is an ApiError with the service's detail", async () => {
    const c = client({ apiKey: "sandbox-member" });
    const [target] = await runningAt(client(), 20111);
    const id = target?.id ?? 0;
    const saved = await c.completeStep(id, {
      step_id: 20111,
      mode: "save",
      actions: [{ action_id: 50230, input_object: { inputValue: "looks fine" } }],
    });
    expect(saved.active_step_ids).toContain(20111);
    const done = await c.completeStep(id, {
      step_id: 20111,
      actions: [{ action_id: 50230, input_object: { inputValue: "approved" } }],
    });
    expect(done.active_step_ids).not.toContain(20111);
    const again = await c.completeStep(id, { step_id: 20111 }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).status).toBe(400);
    expect((again as ApiError).message).toMatch(
      new RegExp(`^completing step \\d+ of instance ${id}: 400 Bad Request: .+`),
    );
    expect(sb.requests().filter((r) => r.method === "POST").length).toBe(3);
  });

  it("aborts in bulk; the instances then carry aborted_time", async () => {
    const c = client();
    const running = (await runningAt(c, 20110)).slice(0, 3).map((i) => i.id);
    expect(running.length).toBe(3);
    const res = await c.bulkAbort(running);
    expect([...res.ids].sort()).toEqual([...running].sort());
    const post = sb.requests().find((r) => r.method === "POST");
    expect(post?.path).toBe("/api/instances/bulk/abort");
    expect(post?.body).toEqual({ ids: running });
    for (const id of running) expect((await c.getInstance(id)).aborted_time).toBeTruthy();
  });

  it("page/limit pagination of a form field: concurrent pages yielded in order, count matches, no duplicates", async () => {
    const c = client({ concurrency: 4 });
    const { items, counts, pages } = await collect(
      c.formFieldPages(1042, 20111, 50222, { limit: 7, ordering: ["name"] }),
    );
    const ids = items.map((i) => i.instance_id);
    expect(ids.length).toBe(counts[0]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBe(Math.ceil(ids.length / 7));
    // yielded order equals the server's order, which a single big page shows
    const whole = await collect(c.formFieldPages(1042, 20111, 50222, { ordering: ["name"] }));
    expect(whole.items.map((i) => i.instance_id)).toEqual(ids);
    expect(c.stats().maxInFlight).toBeGreaterThan(1);
    expect(items.every((i) => i.value === null || typeof i.value === "object")).toBe(true);
  });

  it("form-field query: instance_ids comma-joined restricts the result", async () => {
    const c = client();
    const all = await collect(c.formFieldPages(1042, 20111, 50222));
    const pick = all.items.slice(0, 3).map((i) => i.instance_id);
    sb.clearRequests();
    const some = await collect(c.formFieldPages(1042, 20111, 50222, { instance_ids: pick }));
    expect(some.items.map((i) => i.instance_id).sort()).toEqual([...pick].sort());
    expect(sb.requests()[0]?.query).toMatchObject({ instance_ids: pick.join(","), limit: "500", page: "1" });
  });

  it("counts requests by endpoint and outcome", async () => {
    const c = client();
    await c.listWorkflows();
    await c.getInstance(999_999_999).catch(() => undefined);
    const s = c.stats();
    expect(s.total).toBe(2);
    expect(s.byEndpoint.listWorkflows).toEqual({ ok: 1, failed: 0, retries: 0 });
    expect(s.byEndpoint.getInstance).toEqual({ ok: 0, failed: 1, retries: 0 });
    expect(s.byStatus).toEqual({ "200": 1, "404": 1 });
    expect(s.total).toBe(sb.requests().length);
  });
});

describe("faults", () => {
  it("503 bursts are retried for GETs: the listing comes out whole", async () => {
    const clean = await collect(client().instancePages(1042, { page_size: 10 }));
    sb.clearRequests();
    sb.setFaults({ failRate: 0.4 });
    const events: ClientEvent[] = [];
    const c = client({ maxAttempts: 12 }, events);
    const faulty = await collect(c.instancePages(1042, { page_size: 10 }));
    expect(faulty.items.map((i) => i.id)).toEqual(clean.items.map((i) => i.id));
    const log = sb.requests();
    const failures = log.filter((r) => r.status === 503).length;
    expect(failures).toBeGreaterThan(0);
    expect(c.stats().retries).toBe(failures);
    expect(events.filter((e) => e.type === "retry").length).toBe(failures);
    expect(c.stats().total).toBe(log.length);
  });

  it("a POST answered 503 ends as OutcomeUnknown carrying the body, sent exactly once", async () => {
    sb.setFaults({ failRate: 1 });
    const c = client();
    const body = { ids: [100001] };
    const err = await c.bulkAbort(body.ids).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).body).toEqual(body);
    expect((err as OutcomeUnknownError).status).toBe(503);
    expect(sb.requests().filter((r) => r.method === "POST").length).toBe(1);
  });

  it("a POST applied and then reset ends as OutcomeUnknown, never auto-retried; the change did happen once", async () => {
    const [target] = await runningAt(client(), 20111);
    const id = target?.id ?? 0;
    sb.clearRequests();
    sb.setFaults({ resetRate: 1 });
    const c = client({ maxAttempts: 5 });
    const body = { step_id: 20111, actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }] };
    const err = await c.completeStep(id, body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).body).toEqual(body);
    expect((err as OutcomeUnknownError).path).toBe(`/instances/${id}/complete_step/`);
    const posts = sb.requests().filter((r) => r.method === "POST");
    expect(posts.length).toBe(1);
    expect(posts[0]?.reset).toBe(true);
    sb.setFaults({ resetRate: 0 });
    // the applier would look before retrying: the step is no longer active
    expect((await c.getInstance(id)).active_step_ids).not.toContain(20111);
  });

  it("a slow server hits the timeout: GETs retried, then TransportError", async () => {
    sb.setFaults({ latencyMs: 400 });
    const c = client({ timeoutMs: 100, maxAttempts: 2 });
    const err = await c.listWorkflows().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toMatch(/timed out after 100 ms \(2 attempts\)/);
    expect(c.stats().byEndpoint.listWorkflows).toEqual({ ok: 0, failed: 2, retries: 1 });
  });

  it("429 with Retry-After pauses the whole client, then both callers succeed", async () => {
    // The sandbox limits over a sliding 60 s window, so its Retry-After is up to a minute. Jump the clock (Date only,
    // still advancing) near the end of the window, so the wait it asks for is a second or two.
    sb.setFaults({ rateLimitPerMin: 3 });
    const events: ClientEvent[] = [];
    const c = client({ concurrency: 2 }, events);
    for (let i = 0; i < 3; i++) await c.listWorkflows();
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    vi.setSystemTime(Date.now() + 58_500);
    const [a, b] = await Promise.all([c.listWorkflows(), c.getInstance(100001)]);
    expect(a.length).toBeGreaterThan(0);
    expect(b.id).toBe(100001);
    const pause = events.find(
      (e): e is Extract<ClientEvent, { type: "rate-limited" }> => e.type === "rate-limited" && e.source === "server",
    );
    expect(pause?.delayMs).toBeGreaterThanOrEqual(1000);
    expect(pause?.delayMs).toBeLessThanOrEqual(2000);
    const log = sb.requests();
    const refused = log.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // nothing was sent while the pause lasted: the next request after the first 429 came at least the pause later
    const firstRefusal = log.findIndex((r) => r.status === 429);
    const after = log.slice(firstRefusal + 1).filter((r) => r.status !== 429);
    expect(after.length).toBe(2);
    const refusedAt = Date.parse(log[firstRefusal]?.at ?? "");
    for (const r of after) expect(Date.parse(r.at) - refusedAt).toBeGreaterThanOrEqual((pause?.delayMs ?? 0) - 50);
    expect(c.stats().rateLimited).toBe(refused.length);
  });

  it("the client-side limiter sends a window's budget at once, holds the rest for the window, says so, and meets no 429", async () => {
    // a 1.5 s window (on both sides) keeps the test short: 10 a window, so the client's budget is 9
    sb.setFaults({ rateLimitPerMin: 10, rateLimitWindowMs: 1_500 });
    const events: ClientEvent[] = [];
    const c = client({ rateLimitPerMin: 10, rateLimitWindowMs: 1_500 }, events);
    await Promise.all(Array.from({ length: 9 }, () => c.listWorkflows()));
    expect(c.stats().rateLimitWaitMs).toBe(0);
    await Promise.all(Array.from({ length: 5 }, () => c.listWorkflows()));
    expect(c.stats().rateLimitWaitMs).toBeGreaterThan(0);
    const waits = events.filter((e) => e.type === "rate-limited");
    expect(waits).toEqual([
      {
        type: "rate-limited",
        delayMs: expect.any(Number) as number,
        source: "client",
        reason: "window",
        budget: 9,
        windowMs: 1_500,
      },
    ]);
    const log = sb.requests();
    expect(log).toHaveLength(14);
    expect(log.filter((r) => r.status !== 200)).toEqual([]);
  });
});

describe("secrets", () => {
  it("the key appears in no error, event or stats, across failures", async () => {
    const key = "sandbox-admin";
    const events: ClientEvent[] = [];
    const c = client({ maxAttempts: 2, timeoutMs: 150 }, events);
    const errors: unknown[] = [];
    errors.push(await c.getInstance(999_999_999).catch((e: unknown) => e));
    errors.push(
      await client({ apiKey: "sandbox-nobody-1c7e" }, events)
        .listWorkflows()
        .catch((e: unknown) => e),
    );
    sb.setFaults({ failRate: 1 });
    errors.push(await c.completeStep(100001, { step_id: 20111 }).catch((e: unknown) => e));
    errors.push(await c.listWorkflows().catch((e: unknown) => e));
    sb.setFaults({ failRate: 0, latencyMs: 400 });
    errors.push(await c.listWorkflows().catch((e: unknown) => e));
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    const dump = JSON.stringify({
      errors: errors.map((e) => (e instanceof Error ? [e.message, e.stack, { ...e }] : e)),
      events,
      stats: c.stats(),
    });
    expect(dump).not.toContain(key);
    expect(dump).not.toContain("sandbox-nobody-1c7e");
    expect((errors[1] as ApiError).status).toBe(401);
  });
});

/** abort (src/actions/abort.ts): its schema fragment, compile, plan, views, plan-file checks, effect, batched send. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { abort, actionKind, mutatingKind } from "../../src/actions/index.js";
import { BULK_ABORT_PATH } from "../../src/actions/abort.js";
import { createClient } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { instance } from "../helpers/instances.js";
import {
  change,
  changeOf,
  diagnosticsOf,
  fragmentValidator,
  kindsRule,
  planFirst,
  record,
  refusals,
  T0,
  T1,
} from "./helpers.js";

const kind = mutatingKind("abort");

describe("abort in the registry", () => {
  it("is the module src/actions/abort.ts exports, a mutating kind that may be written bare", () => {
    expect(actionKind("abort")).toBe(abort);
    expect(kind).toBe(abort);
    expect(kind.mutating).toBe(true);
    expect(kind.bare).toBe(true);
    expect(kind.presentation).toMatchObject({ symbol: "✗", legend: "abort the instance", colour: "red" });
    expect(kind.presentation.summary(1)).toBe("1 instance to abort");
    expect(kind.presentation.summary(2)).toBe("2 instances to abort");
  });
});

describe("abort schema fragment", () => {
  const errors = fragmentValidator("abort");

  it("accepts the bare string and the empty object form", () => {
    expect(errors("abort")).toEqual([]);
    expect(errors({ abort: {} })).toEqual([]);
  });

  it("rejects options, a null body, other strings and extra keys", () => {
    expect(errors({ abort: { reason: "stale" } })).not.toEqual([]);
    expect(errors({ abort: null })).not.toEqual([]);
    expect(errors("abrt")).not.toEqual([]);
    expect(errors({ abort: {}, report: { group_by: "tags" } })).not.toEqual([]);
  });

  it("has a description for editors in both forms", () => {
    const forms = kind.schema.anyOf as Array<{ description?: string }>;
    expect(forms).toHaveLength(2);
    for (const f of forms) expect(f.description).toBe(kind.description);
  });

  it("a rule file with an abort that takes options fails to load, at the entry's line", () => {
    const errs = diagnosticsOf("      - abort: { reason: stale }\n");
    expect(errs.length).toBeGreaterThan(0);
    expect(errs[0]?.line).toBe(7);
  });
});

describe("abort compile (test/fixtures/rules/kinds.yaml)", () => {
  it("compiles both forms to the same action, which reads nothing and takes the whole instance", () => {
    const bare = kindsRule("stop").actions[0];
    const written = kindsRule("stop-written-out").actions[0];
    expect(bare).toMatchObject({ kind: "abort" });
    expect(written).toMatchObject({ kind: "abort" });
    expect(Object.keys(bare ?? {}).sort()).toEqual(["kind", "pos"]);
    if (bare?.kind !== "abort") throw new Error("not an abort");
    expect(kind.reads(bare)).toEqual([]);
    expect(kind.target(bare)).toBe("instance");
    expect(kind.phrase(bare)).toBe("aborts instances");
  });
});

describe("abort plan", () => {
  const rule = kindsRule("stop");

  it("a running instance: id, the bulk request for its id, status before/after, precondition", async () => {
    const c = await changeOf(rule, instance({ id: 21, process_id: 1042, record: { last_updated_time: T0 } }));
    expect(c).toEqual({
      id: "stop:abort:21",
      rule: "stop",
      instance_id: 21,
      instance_name: "Instance 21",
      process_id: 1042,
      kind: "abort",
      request: { method: "POST", path: BULK_ABORT_PATH, body: { ids: [21] } },
      before: { status: "running" },
      after: { status: "aborted" },
      precondition: { status: "running", last_updated_time: T0 },
    });
    expect(BULK_ABORT_PATH).toBe("/instances/bulk/abort");
  });

  it("without a record the precondition is the status alone; a step's activity does not matter", async () => {
    const c = await changeOf(rule, instance({ id: 22 }));
    expect(c.precondition).toEqual({ status: "running" });
    expect(c.step_id).toBeUndefined();
    expect(await planFirst(rule, instance({ id: 22, record: { active_step_ids: [] } }))).toHaveProperty("change");
  });

  it("skips an instance that is not running", async () => {
    expect(await planFirst(rule, instance({ id: 23, status: "completed" }))).toEqual({
      skipped: "the instance is completed",
    });
    expect(await planFirst(rule, instance({ id: 23, status: "aborted" }))).toEqual({
      skipped: "the instance is aborted",
    });
  });
});

describe("abort views and plan-file checks", () => {
  it("describe() says abort; changeTarget() is the whole instance", () => {
    expect(kind.describe(change("abort"))).toEqual({ label: "abort", effect: "aborts it" });
    expect(kind.changeTarget(change("abort"))).toBe("instance");
  });

  it("checkChange() accepts the change as planned", () => {
    expect(refusals(kind.checkChange, change("abort"))).toEqual([]);
  });

  it("checkChange() refuses another path, or a body that names other or more instances than the change", () => {
    const c = change("abort");
    expect(refusals(kind.checkChange, { ...c, request: { ...c.request, path: "/instances/1/abort/" } })).toEqual([
      "request.path: an abort is sent to /instances/bulk/abort",
    ]);
    const body = (b: unknown) => refusals(kind.checkChange, { ...c, request: { ...c.request, body: b } });
    expect(body({ ids: [2] })).toEqual(['request.body: an abort\'s body must be {"ids": [1]}']);
    expect(body({ ids: [1, 2] })).toEqual(['request.body: an abort\'s body must be {"ids": [1]}']);
    expect(body({ ids: ["1"] })).toEqual(['request.body: an abort\'s body must be {"ids": [1]}']);
    expect(body({})).toEqual(['request.body: an abort\'s body must be {"ids": [1]}']);
  });
});

describe("abort effect (after an unknown outcome)", () => {
  it("abort: took effect when aborted_time is set", () => {
    expect(kind.effect(change("abort"), record({ aborted_time: T1 })).applied).toBe(true);
    expect(kind.effect(change("abort"), record({})).applied).toBe(false);
  });

  it("says what the record showed", () => {
    expect(kind.effect(change("abort"), record({ aborted_time: T1 })).detail).toBe(`aborted at ${T1}`);
    expect(kind.effect(change("abort"), record({ completed_time: T1 })).detail).toBe("not aborted (completed)");
  });
});

describe("abort send: batched (sandbox over HTTP)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, seed: 6, instances: 80 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("sends many instances in one request; finds them again among recently aborted; says why an id was not aborted", async () => {
    expect(kind.send.mode).toBe("batch");
    if (kind.send.mode !== "batch") return;
    const running = sb.store.list(1043).filter((i) => i.abortedTime === null && i.completedTime === null);
    const done = sb.store.list(1043).find((i) => i.completedTime !== null && i.abortedTime === null);
    if (running.length < 2 || !done) throw new Error("the sandbox has too few onboardings");
    const ids = running.slice(0, 2).map((i) => i.id);
    const since = new Date(Date.now() - 1000);
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    sb.clearRequests();
    try {
      const acted = await kind.send.send(client, [...ids, done.id]);
      expect(new Set(acted)).toEqual(new Set(ids));
      const posts = sb.requests().filter((r) => r.method === "POST");
      expect(posts).toHaveLength(1);
      expect(posts[0]?.path).toBe("/api/instances/bulk/abort");

      const found = await kind.send.tookEffectSince(client, [1043, 1043], since);
      for (const id of ids) expect(found.has(id)).toBe(true);
      expect(found.has(done.id)).toBe(false);

      for (const id of ids)
        expect(kind.effect(change("abort", { instance_id: id }), await client.getInstance(id)).applied).toBe(true);
      expect(kind.send.whyNot(await client.getInstance(done.id))).toMatch(/^completed \(at .+\)$/);
      expect(kind.send.whyNot(await client.getInstance(ids[0]!))).toMatch(/^already aborted \(at .+\)$/);
    } finally {
      await client.close();
    }
    expect(kind.send.whyNot(record({}))).toMatch(/^still running: the service did not abort it/);
  });
});

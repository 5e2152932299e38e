/**
 * `flowrules watch` in-process against the sandbox over loopback HTTP, the sandbox enforcing 100 requests per window
 * (the minute scaled down to 3 s on both sides, as test/api/rate-limit-http.test.ts does).
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import fc from "fast-check";
import { watchFlags } from "../../src/cli/verbs/watch/run.js";
import { derivedIntervalMs, watchCommand, type WatchCommandOptions } from "../../src/commands/watch.js";
import { pollGapMs } from "../../src/watch/settings.js";
import { planRuleSet } from "../../src/commands/plan.js";
import { loadRules } from "../../src/rules/index.js";
import { UserError } from "../../src/model/errors.js";
import { historyCommand } from "../../src/commands/history.js";
import { HistoryDocument } from "../../src/render/history/json-schema.js";
import {
  captureIO,
  changeKey,
  connection,
  effectiveMutations,
  MIXED_RULES,
  tempDir,
  writeRules,
} from "../apply/helpers.js";
import { APPROVE_RULES, eventIO, personCompletes, runningAt, until } from "./helpers.js";
import { sendJson, startLocalServer, type LocalServer } from "../api/helpers.js";

const WINDOW_MS = 3000;
let sb: RunningSandbox | undefined;
const dirs: string[] = [];
const stops: AbortController[] = [];
const running: Array<Promise<unknown>> = [];

afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await Promise.allSettled(running.splice(0));
  await sb?.close();
  sb = undefined;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function setUp(
  yaml: string,
  over: Parameters<typeof startSandbox>[0] = {},
): Promise<{ dir: string; rules: string }> {
  sb = await startSandbox({
    port: 0,
    instances: 300,
    seed: 7,
    rateLimitPerMin: 100,
    rateLimitWindowMs: WINDOW_MS,
    ...over,
  });
  const dir = await tempDir();
  dirs.push(dir);
  return { dir, rules: await writeRules(dir, yaml) };
}

function watchOpts(
  s: RunningSandbox,
  dir: string,
  rules: string,
  over: Partial<WatchCommandOptions> = {},
): WatchCommandOptions {
  const stop = new AbortController();
  stops.push(stop);
  return {
    paths: [rules],
    planning: { rules: [], explainRequests: false, fullRefresh: false, state: join(dir, "state") },
    stateDir: join(dir, "state"),
    apply: true,
    budgetPercent: 20,
    metricsHost: "127.0.0.1",
    connection: connection(s, { rateLimitPerMin: 100 }),
    signal: stop.signal,
    cwd: dir,
    intervalMs: 150,
    minIntervalMs: 100,
    tuning: { verifyDelayMs: 20, client: { rateLimitWindowMs: WINDOW_MS, retryBaseMs: 5, retryMaxDelayMs: 50 } },
    ...over,
  };
}

describe("watch --apply", () => {
  it("the first cycle applies exactly what a stateless plan plans, and meets no 429", async () => {
    const { dir, rules } = await setUp(MIXED_RULES);
    const loaded = await loadRules([rules]);
    if (!loaded.ruleSet) throw new Error("rules do not load");
    const stateless = await planRuleSet(loaded.ruleSet, connection(sb as RunningSandbox), captureIO(), { quiet: true });
    const expected = stateless.changes
      .filter((c) => c.audit !== true)
      .map(changeKey)
      .sort();
    expect(expected.length).toBeGreaterThan(20);
    (sb as RunningSandbox).clearRequests();
    const io = eventIO();
    const code = await watchCommand(watchOpts(sb as RunningSandbox, dir, rules, { maxCycles: 1 }), io);
    expect(code).toBe(0);
    const counts = effectiveMutations(sb as RunningSandbox);
    expect([...counts.keys()].sort()).toEqual(expected);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect((sb as RunningSandbox).requests().filter((r) => r.status === 429)).toEqual([]);
    const cycle = io.events.find((e) => e.name === "watch.cycle");
    expect(cycle?.fields).toMatchObject({ cycle: 1, kind: "first", applied: expected.length, stale: 0, failed: 0 });
    // one event per change, with its cycle
    const applied = io.events.filter((e) => e.name === "change.applied");
    expect(
      applied.map((e) => changeKey(e.fields as { kind: string; instance_id: number; step_id?: number })).sort(),
    ).toEqual(expected);
    expect(applied.every((e) => e.fields.cycle === 1)).toBe(true);
    // stopped: the bookmarks are written and the lock is released
    expect(existsSync(join(dir, "state", "watch", "bookmarks.json"))).toBe(true);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);

    // `flowrules history` lists the cycle's changes from its journal, in both formats
    const json = captureIO();
    expect(await historyCommand({ stateDir: "state", last: 5, format: "json", cwd: dir }, json)).toBe(0);
    const doc = HistoryDocument.parse(JSON.parse(json.out()));
    expect(doc.cycles).toHaveLength(1);
    expect(doc.cycles[0]?.finished).toBe(true);
    const listed = doc.cycles[0]?.changes ?? [];
    expect(listed.map(changeKey).sort()).toEqual(expected);
    expect(listed.every((c) => c.outcome === "applied" && c.at !== null)).toBe(true);
    // --since: the cycle started before a later instant is left out, and kept from an earlier one
    const startedAt = Date.parse(doc.cycles[0]?.started_at ?? "");
    const later = captureIO();
    await historyCommand(
      { stateDir: "state", last: 5, since: new Date(startedAt + 1), format: "json", cwd: dir },
      later,
    );
    expect(HistoryDocument.parse(JSON.parse(later.out())).cycles).toEqual([]);
    const earlier = captureIO();
    await historyCommand({ stateDir: "state", last: 5, since: new Date(startedAt), format: "json", cwd: dir }, earlier);
    expect(HistoryDocument.parse(JSON.parse(earlier.out())).cycles).toHaveLength(1);
    const text = captureIO();
    await historyCommand({ stateDir: "state", last: 5, format: "text", cwd: dir }, text);
    expect(
      text
        .out()
        .split("\n")
        .filter((l) => /^ {2}\S+Z +applied +\S+ +\d+ /.test(l)),
    ).toHaveLength(expected.length);

    // a cycle killed while applying: the change whose intent has no outcome is in flight, the rest not started
    const folder = doc.cycles[0]?.folder ?? "";
    const journal = join(dir, "state", "watch", "cycles", folder, "plan.json.journal.jsonl");
    const lines = (await readFile(journal, "utf8")).trim().split("\n");
    const firstIntent = lines.findIndex((l) => l.includes('"event":"intent"'));
    await writeFile(journal, `${lines.slice(0, firstIntent + 1).join("\n")}\n`);
    const killed = captureIO();
    await historyCommand({ stateDir: "state", last: 5, format: "json", cwd: dir }, killed);
    const after = HistoryDocument.parse(JSON.parse(killed.out())).cycles[0];
    expect(after?.finished).toBe(false);
    expect(after?.changes.filter((c) => c.outcome === "in_flight")).toHaveLength(1);
    expect(after?.changes.filter((c) => c.outcome === "not_started")).toHaveLength(expected.length - 1);
  });

  it("a newly matching instance is acted on by the next cycle; idle polls cost one list per workflow", async () => {
    const { dir, rules } = await setUp(APPROVE_RULES);
    const s = sb as RunningSandbox;
    const io = eventIO();
    const opts = watchOpts(s, dir, rules);
    running.push(watchCommand(opts, io));
    await until(() => io.events.some((e) => e.name === "watch.cycle"), 10_000, "the first cycle");
    const first = new Set(effectiveMutations(s).keys());
    expect(first.size).toBeGreaterThan(0);
    // idle: a few polls, each one list request for the one workflow
    await until(() => io.events.filter((e) => e.name === "watch.poll").length >= 4, 5_000, "idle polls");
    s.clearRequests();
    await until(() => io.events.filter((e) => e.name === "watch.poll").length >= 7, 5_000, "more idle polls");
    const idle = s.requests();
    expect(idle.length).toBeGreaterThan(0);
    expect(idle.every((r) => r.method === "GET" && r.path === "/api/v2/processes/1042/instances/")).toBe(true);
    // the watcher's own approvals are not updates to react to: the polls that found them ran no cycle
    expect(io.events.filter((e) => e.name === "watch.cycle")).toHaveLength(1);

    // people submit two claims: they reach the manager step and the watcher approves them
    const fresh = runningAt(s, 1042, 20110).slice(0, 2);
    expect(fresh.length).toBe(2);
    for (const id of fresh) await personCompletes(s, id, 20110);
    const appliedIn = (kind: string): number =>
      io.events
        .filter((e) => e.name === "watch.cycle" && e.fields.kind === kind)
        .reduce((n, e) => n + Number(e.fields.applied), 0);
    await until(() => appliedIn("update") >= 2, 10_000, "the approvals");
    // the log was cleared after the first cycle: what came since is the two approvals, once each, nothing repeated
    // (the people's own completions of step 20110 are in the log too)
    const counts = new Map([...effectiveMutations(s)].filter(([k]) => !k.endsWith(":20110")));
    expect([...counts.keys()].sort()).toEqual(fresh.map((id) => `complete_step:${id}:20111`).sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (const k of counts.keys()) expect(first.has(k)).toBe(false);
    const incremental = io.events.filter((e) => e.name === "watch.cycle" && e.fields.kind === "update");
    // one cycle or two (the two edits may fall on either side of a poll), nothing stale
    expect(incremental.reduce((n, e) => n + Number(e.fields.applied), 0)).toBe(2);
    expect(incremental.every((e) => e.fields.stale === 0 && e.fields.failed === 0)).toBe(true);
    expect(s.requests().filter((r) => r.status === 429)).toEqual([]);
  });

  it("after applying N changes: the polls that find only them run no cycle; the next cycle lists only what changed and reads each of the N at most once a kind", async () => {
    // save_step keeps the instances in the selection and the report reads their records: the next cycle needs them
    const { dir, rules } = await setUp(`
version: 1
rules:
  - name: note-purchases
    workflow: 1044
    select: { status: [running], active_step_id: 20131 }
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "Checked by flowrules" } } ] }
  - name: purchases-by-priority
    workflow: 1044
    select: { status: [running] }
    actions: [ { report: { group_by: priority, columns: [id, name, deadline] } } ]
`);
    const s = sb as RunningSandbox;
    const io = eventIO();
    running.push(watchCommand(watchOpts(s, dir, rules), io));
    await until(() => io.events.some((e) => e.name === "watch.cycle"), 10_000, "the first cycle");
    const applied = new Set([...effectiveMutations(s).keys()].map((k) => Number(k.split(":")[1])));
    expect(applied.size).toBeGreaterThan(5);
    // the polls that see the watcher's own writes: no cycle, nothing but the polls (a list and the newest's record)
    const polls = (): number => io.events.filter((e) => e.name === "watch.poll").length;
    const after = polls();
    s.clearRequests();
    await until(() => polls() >= after + 3, 5_000, "polls after the first cycle");
    expect(io.events.filter((e) => e.name === "watch.cycle")).toHaveLength(1);
    const idle = s.requests();
    expect(idle.length).toBeGreaterThan(0);
    expect(
      idle.every(
        (r) =>
          r.method === "GET" &&
          (r.path === "/api/v2/processes/1044/instances/" || /^\/api\/instances\/\d+\/$/.test(r.path)),
      ),
    ).toBe(true);
    expect(idle.filter((r) => r.path.endsWith("/instances/") && r.query.page_size === undefined)).toEqual([]);

    // people move two requests to the budget step: the next cycle notes exactly those two
    const fresh = runningAt(s, 1044, 20130).slice(0, 2);
    expect(fresh).toHaveLength(2);
    s.clearRequests();
    for (const id of fresh) await personCompletes(s, id, 20130);
    await until(
      () => io.events.some((e) => e.name === "watch.cycle" && e.fields.kind === "update"),
      10_000,
      "the next cycle",
    );
    const cycle = io.events.find((e) => e.name === "watch.cycle" && e.fields.kind === "update");
    expect(cycle?.fields).toMatchObject({ applied: 2, stale: 0, failed: 0 });
    const log = s.requests();
    // no listing of a selection in full: only what changed since the first cycle looked (beside the polls and the
    // structure probe, one element each)
    const lists = log.filter(
      (r) => r.method === "GET" && r.path === "/api/v2/processes/1044/instances/" && r.query.page_size !== "1",
    );
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.filter((r) => typeof r.query.last_updated_time_after !== "string").map((r) => r.query)).toEqual([]);
    // each applied instance read at most once per kind of read (record, with values, with step times); the check
    // that nobody else changed it since our write is one request per write instant (docs/performance.md)
    const reads = new Map<string, number>();
    for (const r of log) {
      const id = Number(/^\/api\/instances\/(\d+)\/$/.exec(r.path)?.[1]);
      if (r.method !== "GET" || !applied.has(id)) continue;
      const key = `${id}:${JSON.stringify(r.query)}`;
      reads.set(key, (reads.get(key) ?? 0) + 1);
    }
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(s.requests().filter((r) => r.status === 429)).toEqual([]);
  });

  it("a second watcher on the same state dir refuses at once with one line", async () => {
    const { dir, rules } = await setUp(APPROVE_RULES);
    const io = eventIO();
    running.push(watchCommand(watchOpts(sb as RunningSandbox, dir, rules), io));
    await until(() => io.events.some((e) => e.name === "watch.started"), 10_000, "the first watcher");
    const started = Date.now();
    const second = watchCommand(watchOpts(sb as RunningSandbox, dir, rules), eventIO());
    await expect(second).rejects.toThrow(UserError);
    await expect(second).rejects.toThrow(/^another watcher uses the state dir .*state: .*pid \d+/);
    const err = await second.catch((e: unknown) => e);
    expect(String((err as Error).message)).not.toContain("\n");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a rule above its limit holds only itself: the cycle is partly applied, the other rules are applied", async () => {
    const limited = MIXED_RULES.replace(
      "    actions: [abort]",
      "    actions: [abort]\n    limits: { max_instances: 1 }",
    );
    const { dir, rules } = await setUp(limited);
    const io = eventIO();
    const code = await watchCommand(watchOpts(sb as RunningSandbox, dir, rules, { maxCycles: 1 }), io);
    expect(code).toBe(0);
    const cycle = io.events.find((e) => e.name === "watch.cycle");
    expect(cycle?.fields.errors).toEqual([expect.stringMatching(/abort-onboardings/)]);
    expect(cycle?.fields.held).toEqual(["abort-onboardings"]);
    const keys = [...effectiveMutations(sb as RunningSandbox).keys()];
    expect(keys.some((k) => k.startsWith("abort:"))).toBe(false);
    expect(keys.some((k) => k.startsWith("complete_step:"))).toBe(true);
    expect(keys.some((k) => k.startsWith("save_step:"))).toBe(true);
  });

  it("without --apply it only plans: no mutation reaches the service", async () => {
    const { dir, rules } = await setUp(MIXED_RULES);
    const io = eventIO();
    const code = await watchCommand(watchOpts(sb as RunningSandbox, dir, rules, { maxCycles: 1, apply: false }), io);
    expect(code).toBe(0);
    expect((sb as RunningSandbox).requests().filter((r) => r.method === "POST")).toEqual([]);
    expect(io.events.find((e) => e.name === "watch.cycle")?.fields.planned).toBeGreaterThan(0);
  });
});

describe("watch without --apply, many changes", () => {
  it("lists the first 100 planned changes and counts the rest; audit changes are counted apart, not listed", async () => {
    const yaml = [
      "version: 1",
      "rules:",
      "  - name: abort-onboardings",
      "    workflow: 1043",
      "    select: { status: [running] }",
      "    actions: [abort]",
      "  - name: audit-expenses",
      "    workflow: 1042",
      "    select: { status: [running] }",
      "    mode: audit",
      "    actions: [abort]",
      "",
    ].join("\n");
    const { dir, rules } = await setUp(yaml, { instances: 1500, rateLimitPerMin: 0 });
    const s = sb as RunningSandbox;
    const io = captureIO();
    const code = await watchCommand(watchOpts(s, dir, rules, { maxCycles: 1, apply: false }), io);
    expect(code).toBe(0);
    const text = io.out() + io.err();
    const running = (p: number): number =>
      s.store.list(p).filter((i) => i.abortedTime === null && i.completedTime === null).length;
    const planned = running(1043);
    expect(planned).toBeGreaterThan(100);
    expect(text).toContain(`${planned} planned, not applied (no --apply), ${running(1042)} audit`);
    expect(text.match(/^ {2}planned: /gm)?.length).toBe(100);
    expect(text).not.toMatch(/^ {2}planned: .*audit-expenses/m);
    expect(text).toContain(`… and ${planned - 100} more (--log-format json lists them all)`);
  });
});

describe("reload of the config file", () => {
  it("an edit of the config file reloads (a planning setting changed: a reload cycle); one that does not parse keeps the settings before", async () => {
    const { dir, rules } = await setUp(APPROVE_RULES);
    const cfg = join(dir, "flowrules.config.yaml");
    await writeFile(cfg, "default_profile: t\nprofiles:\n  t:\n    opt_out_tag: keep-out\n");
    const env = {
      FLOWRULES_BASE_URL: (sb as RunningSandbox).baseUrl,
      FLOWRULES_API_KEY: "sandbox-admin",
      FLOWRULES_RATE_LIMIT: "100",
    };
    const raw = { state: join(dir, "state"), config: cfg };
    const io = eventIO();
    const opts = watchOpts(sb as RunningSandbox, dir, rules);
    running.push(
      watchCommand(
        {
          ...opts,
          ...watchFlags([rules], raw, env),
          signal: opts.signal,
          intervalMs: 150,
          minIntervalMs: 100,
          reread: () => watchFlags([rules], raw, env),
          configFile: cfg,
        },
        io,
      ),
    );
    await until(() => io.events.some((e) => e.name === "watch.cycle"), 10_000, "the first cycle");

    await writeFile(cfg, "default_profile: t\nprofiles:\n  t:\n    opt_out_tag: other-tag\n");
    await until(
      () => io.events.some((e) => e.name === "watch.cycle" && e.fields.kind === "reload"),
      10_000,
      "a reload cycle",
    );
    expect(io.events.find((e) => e.name === "watch.reloaded")?.fields).toMatchObject({
      why: "the rule files or the config file changed",
      changed: true,
      rules: 1,
    });

    await writeFile(cfg, "default_profile: t\nprofiles: [\n");
    await until(() => io.events.some((e) => e.name === "watch.reload_failed"), 10_000, "the failed reload");
    expect(io.events.find((e) => e.name === "watch.reload_problem")?.fields.message).toMatch(/flowrules\.config\.yaml/);
    const polls = io.events.filter((e) => e.name === "watch.poll").length;
    await until(() => io.events.filter((e) => e.name === "watch.poll").length > polls + 2, 10_000, "polls after it");
    expect(io.events.filter((e) => e.name === "watch.failed")).toEqual([]);
  });
});

describe("notifications", () => {
  let receiver: LocalServer | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it("posts the apply summary of a cycle that changed something, never the key; a cycle that changes nothing posts nothing", async () => {
    receiver = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true }));
    const { dir, rules } = await setUp(APPROVE_RULES);
    const code = await watchCommand(
      watchOpts(sb as RunningSandbox, dir, rules, {
        maxCycles: 1,
        notify: { urls: [new URL(`${receiver.origin}/hook`)] },
      }),
      eventIO(),
    );
    expect(code).toBe(0);
    expect(receiver.requests).toHaveLength(1);
    const body = JSON.parse(receiver.requests[0]?.body ?? "{}") as { event?: string; summary?: { applied?: number } };
    expect(body.event).toBe("apply.finished");
    expect(body.summary?.applied).toBe(effectiveMutations(sb as RunningSandbox).size);
    expect(receiver.requests[0]?.body).not.toContain("sandbox-admin");
    // a second watcher on the same state: it sees only the first one's own changes, plans nothing, posts nothing
    const io = eventIO();
    const stop = new AbortController();
    const second = watchCommand(
      {
        ...watchOpts(sb as RunningSandbox, dir, rules, { notify: { urls: [new URL(`${receiver.origin}/hook`)] } }),
        signal: stop.signal,
      },
      io,
    );
    await until(() => io.events.filter((e) => e.name === "watch.poll").length >= 3, 10_000, "idle polls");
    stop.abort();
    expect(await second).toBe(0);
    expect(
      io.events
        .filter((e) => e.name === "watch.cycle")
        .every((e) => e.fields.planned === 0 && e.fields.errors instanceof Array && e.fields.errors.length === 0),
    ).toBe(true);
    expect(receiver.requests).toHaveLength(1);
  });
});

describe("/metrics, /healthz and /readyz", () => {
  it("/healthz 503 once the service still fails at the back-off's cap (the watcher stays up), 200 once a cycle succeeds; /readyz likewise; Prometheus text", async () => {
    const { dir, rules } = await setUp(APPROVE_RULES, { failRate: 1 });
    const s = sb as RunningSandbox;
    let port = 0;
    const io = eventIO();
    // the back-off: 150 ms, then its cap of 300 ms from the second failure on
    running.push(
      watchCommand(
        watchOpts(s, dir, rules, {
          metricsPort: 0,
          maxBackoffMs: 300,
          onListening: (p) => (port = p),
          tuning: {
            verifyDelayMs: 20,
            client: { rateLimitWindowMs: WINDOW_MS, retryBaseMs: 5, retryMaxDelayMs: 20, maxAttempts: 2 },
          },
        }),
        io,
      ),
    );
    await until(() => port > 0, 5_000, "the metrics port");
    const get = async (path: string): Promise<{ status: number; body: string; type: string | null }> => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: r.status, body: await r.text(), type: r.headers.get("content-type") };
    };
    await until(() => io.events.filter((e) => e.name === "watch.failed").length >= 2, 10_000, "failed attempts");
    const down = await get("/healthz");
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/^no cycle succeeded yet, retrying at the longest back-off: /);
    expect((await get("/readyz")).status).toBe(503);
    s.setFaults({ failRate: 0 });
    await until(async () => (await get("/healthz")).status === 200, 15_000, "a good cycle");
    await until(async () => (await get("/readyz")).status === 200, 15_000, "ready");
    expect((await get("/readyz")).body).toBe("ready: every rule applied in the last cycle\n");
    const m = await get("/metrics");
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.body).toMatch(/^# TYPE flowrules_cycles_total counter$/m);
    expect(m.body).toMatch(/^flowrules_cycles_total\{result="failed"\} [1-9]\d*$/m);
    expect(m.body).toMatch(/^flowrules_cycles_total\{result="ok"\} [1-9]\d*$/m);
    expect(m.body).toMatch(/^flowrules_requests_total\{status="503"\} [1-9]\d*$/m);
    expect(m.body).toMatch(/^flowrules_requests_total\{status="200"\} [1-9]\d*$/m);
    expect(m.body).toMatch(
      /^flowrules_changes_applied_total\{kind="complete_step",rule="approve-expenses"\} [1-9]\d*$/m,
    );
    expect(m.body).toMatch(/^flowrules_seconds_since_last_good_cycle \d+(\.\d+)?$/m);
    for (const line of m.body.trim().split("\n"))
      expect(line).toMatch(/^(# (HELP|TYPE) flowrules_\w+ .+|flowrules_\w+(\{[^}]*\})? [\d.e+-]+)$/);
    expect(m.body).not.toContain("sandbox-admin");
    expect((await get("/nope")).status).toBe(404);
  });
});

describe("the poll interval", () => {
  it("keeps idle polling (one request per workflow) within the budget, never below the minimum", () => {
    expect(derivedIntervalMs(4, 100, 20, 5000)).toBe(13_000);
    expect(derivedIntervalMs(1, 100, 20, 5000)).toBe(5_000);
    expect(derivedIntervalMs(4, 0, 20, 5000)).toBe(5_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100 }),
        (workflows, rate, budget) => {
          const ms = derivedIntervalMs(workflows, rate, budget, 5000);
          expect(ms).toBeGreaterThanOrEqual(5000);
          // polls a minute × requests a poll ≤ the budget's requests a minute
          expect((60_000 / ms) * workflows).toBeLessThanOrEqual((rate * budget) / 100);
        },
      ),
      { numRuns: 500, seed: 25 },
    );
  });

  it("waits longer after a poll whose reads took it past the budget (a busy tenant), never less than the interval", () => {
    // four lists and three reads of what they found, at 20 % of 100 a minute: 23 s, not 13
    expect(pollGapMs(13_000, 7, 100, 20)).toBe(23_000);
    expect(pollGapMs(13_000, 4, 100, 20)).toBe(13_000);
    expect(pollGapMs(5_000, 9, 0, 20)).toBe(5_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100 }),
        (workflows, reads, rate, budget) => {
          const interval = derivedIntervalMs(workflows, rate, budget, 5000);
          const gap = pollGapMs(interval, workflows + reads, rate, budget);
          expect(gap).toBeGreaterThanOrEqual(interval);
          // such polls a minute × their requests ≤ the budget's requests a minute
          expect((60_000 / gap) * (workflows + reads)).toBeLessThanOrEqual((rate * budget) / 100);
        },
      ),
      { numRuns: 500, seed: 46 },
    );
  });
});

describe("watch flags", () => {
  const env = { FLOWRULES_BASE_URL: "http://127.0.0.1:4010/api", FLOWRULES_API_KEY: "k" };
  it("need a state dir, and refuse an interval under 5 s, a budget outside (0, 100] and a bad port, each in one line", () => {
    expect(() => watchFlags([], {}, env)).toThrow(
      /^watch needs a state dir: pass --state DIR, set FLOWRULES_STATE or give the profile a state/,
    );
    expect(watchFlags([], {}, { ...env, FLOWRULES_STATE: "st" })).toMatchObject({
      stateDir: "st",
      apply: false,
      budgetPercent: 20,
      metricsHost: "127.0.0.1",
    });
    expect(
      watchFlags([], { state: "st", interval: "30s", budget: "10", metricsPort: "9464", apply: true }, env),
    ).toMatchObject({ intervalMs: 30_000, budgetPercent: 10, metricsPort: 9464, apply: true });
    expect(() => watchFlags([], { state: "st", interval: "2s" }, env)).toThrow(
      /^--interval must be at least 5s, got "2s"$/,
    );
    expect(() => watchFlags([], { state: "st", budget: "0" }, env)).toThrow(/--budget/);
    expect(() => watchFlags([], { state: "st", budget: "150" }, env)).toThrow(/--budget/);
    expect(() => watchFlags([], { state: "st", metricsPort: "70000" }, env)).toThrow(/--metrics-port/);
    // the test-only floor lowers the minimum
    expect(
      watchFlags([], { state: "st", interval: "1s" }, { ...env, FLOWRULES_WATCH_MIN_INTERVAL_MS: "200" }).intervalMs,
    ).toBe(1000);
  });
});

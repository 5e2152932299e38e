/**
 * Long runs: staleness judged again during the apply, a bounded run (--max-duration) that a second run finishes, and
 * a lock a live apply never loses. Against the sandbox over real HTTP; counts come from its request log.
 */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/model/errors.js";
import type { LogFields, Logger } from "../../src/log/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

type Line = Record<string, unknown> & { event: string; at: string };

async function journalLines(file: string): Promise<Line[]> {
  return (await readFile(file, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

function eventLog(): Logger & { events: Array<{ name: string; fields: LogFields }> } {
  const events: Array<{ name: string; fields: LogFields }> = [];
  return { structured: true, events, event: (name, fields = {}) => void events.push({ name, fields }) };
}

describe("staleness judged again during the apply", () => {
  it("stops mutating instances another key changed mid-run within one check, and applies the rest exactly once", async () => {
    sb = await startSandbox({ port: 0, instances: 240, seed: 41 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const steps = plan.changes.filter((c) => c.step_id !== undefined);
    expect(steps.length).toBeGreaterThan(20);
    // slow answers keep the apply running while the other user edits (the edit pace is not tied to the machine's load)
    sb.setFaults({ latencyMs: 80 });
    sb.clearRequests();

    // another user saves the active step of planned instances while the apply runs, from the end of the plan's
    // order (not yet sent), one after another
    const edited = new Map<number, number>(); // instance → when its edit was answered (this host's clock)
    let running = true;
    const other = (async () => {
      for (const c of [...steps].reverse()) {
        if (!running) break;
        await new Promise((r) => setTimeout(r, 10));
        const res = await fetch(`${sb?.baseUrl}/instances/${c.instance_id}/complete_step/`, {
          method: "POST",
          headers: { authorization: "Api-Key sandbox-lead", "content-type": "application/json" },
          body: JSON.stringify({ step_id: c.step_id, actions: [], mode: "save" }),
        });
        await res.arrayBuffer();
        if (res.status === 200) edited.set(c.instance_id, Date.now());
      }
    })();
    const io = captureIO();
    const code = await runApply(
      sb,
      dir,
      { paths: [file], recheckEveryMs: 150, connection: { ...connectionOf(sb), concurrency: 2 } },
      io,
    );
    running = false;
    await other;
    expect([1, 2]).toContain(code);
    expect(edited.size).toBeGreaterThan(3);

    const journal = await journalLines(`${file}.journal.jsonl`);
    const checks = journal.filter((l) => l.event === "check");
    expect(checks.length).toBeGreaterThan(2); // the first, and rechecks while sending
    expect(checks.slice(1).some((c) => (c.stale as number) > 0)).toBe(true);
    expect(io.out()).toMatch(/Staleness checks: \d+ \(UTC /);

    const counts = effectiveMutations(sb);
    const intentAt = new Map<string, number>();
    for (const l of journal)
      if (l.event === "intent" && !intentAt.has(l.change as string)) intentAt.set(l.change as string, Date.parse(l.at));
    for (const c of plan.changes) {
      const editedAt = edited.get(c.instance_id);
      const n = counts.get(changeKey(c)) ?? 0;
      if (editedAt === undefined) {
        // untouched by the other user: applied exactly once
        expect(n, c.id).toBe(1);
        expect(stateHolds(sb, c), c.id).toBe(true);
        continue;
      }
      expect(n, c.id).toBeLessThanOrEqual(1);
      const sentAt = intentAt.get(c.id);
      if (sentAt === undefined || sentAt <= editedAt) continue; // started before the edit: it was in flight
      // started after the edit: only until the first check that began after it had judged the instance
      const check = checks.find((k) => Date.parse(k.started_at as string) > editedAt);
      if (check) expect(sentAt, c.id).toBeLessThanOrEqual(Date.parse(check.at));
    }
  });
});

function connectionOf(s: { baseUrl: string }) {
  return {
    baseUrl: s.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: 0,
    concurrency: 4,
    timeoutMs: 10_000,
    insecureHttp: false,
  };
}

describe("--max-duration", () => {
  it("defers what it had no time for (exit 0/2, events), and the same apply again finishes with nothing sent twice", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 42 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    sb.setFaults({ latencyMs: 40 });
    const log = eventLog();
    const io = { ...captureIO(), log };
    const first = await runApply(
      sb,
      dir,
      { paths: [file], maxDurationMs: 800, connection: { ...connectionOf(sb), concurrency: 1 } },
      io,
    );
    const deferred = log.events.filter((e) => e.name === "change.deferred");
    const applied = log.events.filter((e) => e.name === "change.applied");
    expect(deferred.length).toBeGreaterThan(0);
    expect(deferred.every((e) => e.fields.status === "deferred")).toBe(true);
    expect(first).toBe(applied.length > 0 ? 2 : 0);
    expect(io.out()).toContain(`${deferred.length} deferred`);
    expect(io.out()).toMatch(
      /Deferred: \d+ changes? not started before --max-duration 800ms; run the same apply again/,
    );
    const finished = log.events.find((e) => e.name === "apply.finished");
    expect(finished?.fields.deferred).toBe(deferred.length);

    sb.setFaults({ latencyMs: 0 });
    const io2 = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io2)).toBe(2);
    if (applied.length > 0) expect(io2.out()).toContain(`${applied.length} already applied by an earlier run`);
    expect(io2.out()).toContain(`${plan.changes.length - applied.length} change`);
    const counts = effectiveMutations(sb);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(stateHolds(sb, c), c.id).toBe(true);
    }
  });

  it("with no time at all sends nothing and exits 0", async () => {
    sb = await startSandbox({ port: 0, instances: 80, seed: 43 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    sb.clearRequests();
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file], maxDurationMs: 0 }, io)).toBe(0);
    expect(sb.requests().filter((r) => r.method === "POST")).toEqual([]);
    expect(io.out()).toContain(`${plan.changes.length} deferred`);
  });
});

describe("a live apply keeps its lock", () => {
  /** A plan of the mixed rules, and a first apply of it (one request at a time, slowed) that has taken the lock. */
  async function firstApplyHoldingTheLock(
    seed: number,
    latencyMs: number,
  ): Promise<{ server: RunningSandbox; dir: string; file: string; lockFile: string; first: Promise<number> }> {
    const server = await startSandbox({ port: 0, instances: 150, seed });
    sb = server; // closed after the test
    const dir = await tempDir();
    const { file } = await makePlan(server, dir, MIXED_RULES);
    server.setFaults({ latencyMs });
    const lockFile = join(dir, ".flowrules", "apply.lock");
    const first = runApply(server, dir, {
      paths: [file],
      connection: { ...connectionOf(server), concurrency: 1 },
      tuning: { heartbeatMs: 100 },
    });
    while (!existsSync(lockFile)) await new Promise((r) => setTimeout(r, 2));
    return { server, dir, file, lockFile, first };
  }

  it("a second apply is refused while the first runs, however short its --lock-timeout, and is shown the holder's progress", async () => {
    const { server, dir, file, lockFile, first } = await firstApplyHoldingTheLock(44, 30);
    // wait for a heartbeat with progress, then try with a lock timeout far below the first run's age
    let owner: { progress?: string; heartbeat_at?: string } = {};
    while (!owner.progress) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        owner = JSON.parse(await readFile(lockFile, "utf8")) as typeof owner;
      } catch {
        owner = {};
      }
    }
    const second = await runApply(server, dir, { paths: [file], lockTimeoutMs: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(UserError);
    expect((second as Error).message).toMatch(
      new RegExp(
        `pid ${process.pid} on ${hostname()}, started \\d+ s ago, applying plan\\.json.*changes settled, last heartbeat \\d+ s ago`,
      ),
    );
    expect(await first).toBe(2);
    const counts = effectiveMutations(server);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);

  it("with --lock-wait, a second apply waits for the holder to finish, then resumes from the journal and sends nothing twice", async () => {
    const { server, dir, file, first } = await firstApplyHoldingTheLock(45, 20);
    // too short a wait: refused, saying who holds the lock and that it waited
    const impatient = await runApply(server, dir, { paths: [file], lockWaitMs: 150, tuning: { lockPollMs: 20 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(impatient).toBeInstanceOf(UserError);
    expect((impatient as Error).message).toMatch(
      new RegExp(
        `^another apply holds the lock .*apply\\.lock: pid ${process.pid} on ${hostname()}.*; waited 150ms for it to finish \\(--lock-wait\\), nothing was changed$`,
      ),
    );
    // a patient one waits, takes the lock when the first run ends, and finds everything done in the journal
    const io = captureIO();
    // the wait is written back as the shortest exact duration (src/text/duration.ts): 60 000 ms is "1m"
    const patient = runApply(server, dir, { paths: [file], lockWaitMs: 60_000, tuning: { lockPollMs: 20 } }, io);
    expect(await first).toBe(2);
    expect(await patient).toBe(0);
    expect(io.err()).toMatch(/^flowrules: another apply holds the lock .*; waiting up to 1m for it to finish$/m);
    const counts = effectiveMutations(server);
    expect(counts.size).toBeGreaterThan(0);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);
});

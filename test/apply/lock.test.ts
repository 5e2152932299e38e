/** Two applies never run at once; a lock left by a dead or ancient run is taken over, and ours is always released. */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/model/errors.js";
import { acquireLock } from "../../src/fs/lock.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, makePlan, MIXED_RULES, runApply, tempDir } from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function writeLock(dir: string, owner: Record<string, unknown>): Promise<string> {
  const file = join(dir, ".flowrules", "apply.lock");
  await mkdir(join(dir, ".flowrules"), { recursive: true });
  await writeFile(file, JSON.stringify({ host: hostname(), applying: "old-plan.json", token: "t0k3n", ...owner }));
  return file;
}

/** A pid that surely ran and is gone: a child that already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("the apply lock", () => {
  it("refuses a second apply while the first runs, naming the owner and age; the first is not disturbed", async () => {
    sb = await startSandbox({ port: 0, instances: 150, seed: 31 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    sb.setFaults({ latencyMs: 40 });
    const first = runApply(sb, dir, { paths: [file] });
    // start the second once the first holds the lock
    while (!existsSync(join(dir, ".flowrules", "apply.lock"))) await new Promise((r) => setTimeout(r, 2));
    const second = await runApply(sb, dir, { paths: [file] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(UserError);
    expect((second as Error).message).toMatch(
      new RegExp(
        `another apply holds the lock .*apply\\.lock: pid ${process.pid} on ${hostname()}, started \\d+ s ago, applying plan\\.json`,
      ),
    );
    expect(await first).toBe(2);
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
    expect(plan.changes.length).toBeGreaterThan(0);
  });

  it("takes over a lock whose process is gone on this host, and says so", async () => {
    sb = await startSandbox({ port: 0, instances: 100, seed: 32 });
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    const pid = deadPid();
    await writeLock(dir, { pid, started_at: new Date().toISOString() });
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io)).toBe(2);
    expect(io.err()).toContain(`took over the stale lock .flowrules/apply.lock (pid ${pid} on ${hostname()}`);
    expect(io.err()).toContain(`its process ${pid} is gone`);
  });

  it("never takes over a live process's lock on this host, whatever its age; elsewhere, only when its heartbeat stopped", async () => {
    const dir = await tempDir();
    // alive on this host, started 10 hours ago, never beat: still held, even with a 1 s timeout
    const file = await writeLock(dir, {
      pid: process.ppid,
      started_at: new Date(Date.now() - 10 * 3_600_000).toISOString(),
    });
    expect(() => acquireLock(file, { applying: "x", timeoutMs: 1000 })).toThrow(
      /another apply holds the lock .*started 10 h 0 min ago/,
    );
    // another host whose heartbeat stopped 45 minutes ago: taken over
    await writeLock(dir, {
      pid: 4242,
      host: "elsewhere.example",
      started_at: new Date(Date.now() - 5 * 3_600_000).toISOString(),
      heartbeat_at: new Date(Date.now() - 45 * 60_000).toISOString(),
    });
    const lock = acquireLock(file, { applying: "x", timeoutMs: 30 * 60_000 });
    expect(lock.tookOver?.why).toMatch(/heartbeat stopped 45 min ago, beyond the lock timeout of 30 min/);
    // ours now, and our heartbeat writes the time and the progress
    lock.setProgress("12 of 40 changes settled");
    expect(lock.beat()).toBe(true);
    const owner = JSON.parse(await readFile(file, "utf8")) as { pid: number; progress: string; heartbeat_at: string };
    expect(owner.pid).toBe(process.pid);
    expect(owner.progress).toBe("12 of 40 changes settled");
    expect(Number.isNaN(Date.parse(owner.heartbeat_at))).toBe(false);
    lock.release();
    expect(existsSync(file)).toBe(false);
    // another host, started hours ago but beating: respected, shown with its progress
    await writeLock(dir, {
      pid: 4242,
      host: "elsewhere.example",
      started_at: new Date(Date.now() - 5 * 3_600_000).toISOString(),
      heartbeat_at: new Date(Date.now() - 5_000).toISOString(),
      progress: "3,000 of 9,000 changes settled",
    });
    expect(() => acquireLock(file, { applying: "x", timeoutMs: 30 * 60_000 })).toThrow(
      /pid 4242 on elsewhere\.example, started 5 h 0 min ago, applying old-plan\.json, 3,000 of 9,000 changes settled, last heartbeat 5 s ago/,
    );
  });

  it("stamps its start and its heartbeats with the apply's clock", async () => {
    const dir = await tempDir();
    let now = Date.parse("2031-05-01T10:00:00Z");
    const lock = acquireLock(join(dir, "clock.lock"), { applying: "x", timeoutMs: 60_000, now: () => now });
    now += 90_000;
    expect(lock.beat()).toBe(true);
    const owner = JSON.parse(await readFile(join(dir, "clock.lock"), "utf8")) as {
      started_at: string;
      heartbeat_at: string;
    };
    expect(owner).toMatchObject({ started_at: "2031-05-01T10:00:00.000Z", heartbeat_at: "2031-05-01T10:01:30.000Z" });
    lock.release();
  });

  it("is released when the apply fails", async () => {
    sb = await startSandbox({ port: 0, instances: 100, seed: 33 });
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    await sb.close(); // the staleness list cannot be read: the apply fails before any mutation
    const err = await runApply({ baseUrl: sb.baseUrl }, dir, {
      paths: [file],
      tuning: { client: { maxAttempts: 1 } },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
    sb = undefined;
  });
});

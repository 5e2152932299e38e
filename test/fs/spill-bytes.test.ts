/**
 * The byte store of planned changes (src/fs/spill-bytes.ts): what is appended reads back the same in any order, in
 * memory or past the threshold in a temporary file, and that file never has a name one could find or leave behind:
 * not while a run holds it, not after the run, not after SIGTERM of a `plan` child caught while it writes its plan.
 */
import { spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { SpillBytes } from "../../src/fs/spill-bytes.js";
import { setMappedSizes } from "../../src/model/mapped-buffers.js";
import { Prng } from "../../src/sandbox/prng.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { CLI, runCli } from "../helpers/cli.js";
import { fixturePath } from "../helpers/rules.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { until } from "../watch/helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 3000, seed: 7 }));
});

/** The files a process holds open in `dir` (Linux: /proc/PID/fd), as the links read. */
function openIn(pid: number, dir: string): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return link.startsWith(dir) ? [link] : [];
    } catch {
      return [];
    }
  });
}

/** Appends random pieces to a store of that threshold and reads each back, in any order. */
async function roundTrip(threshold: number, seed: number): Promise<void> {
  const dir = await tempDir();
  const rnd = new Prng(seed);
  const store = new SpillBytes({ threshold, dir });
  const pieces: Array<{ text: string; at: number; bytes: number }> = [];
  for (let i = 0; i < 1500; i++) {
    // some pieces larger than a read window and than the write buffer, some with characters of several bytes
    const size = rnd.chance(0.002) ? rnd.int(200_000, 1_500_000) : rnd.int(0, 400);
    const text = `${i}:${"é€x".repeat(Math.ceil(size / 3))}`.slice(0, size + String(i).length + 1);
    pieces.push({ text, ...store.appendText(text) });
  }
  expect(store.spilled).toBe(threshold < 1e9);
  // a file in use has no name: the folder stays empty
  expect(readdirSync(dir)).toEqual([]);
  for (const p of [...pieces].sort(() => rnd.next() - 0.5)) expect(store.text(p.at, p.bytes)).toBe(p.text);
  for (const p of pieces) expect(store.text(p.at, p.bytes)).toBe(p.text);
  const held = openIn(process.pid, dir);
  expect(held.length).toBe(store.spilled ? 1 : 0);
  if (store.spilled) expect(held[0]).toMatch(/\(deleted\)$/);
  store.close();
  expect(openIn(process.pid, dir)).toEqual([]);
}

describe("the plan's byte store", () => {
  it.each([0, 1, 3000, 1e9])("threshold %i: every piece reads back the same, in any order", (threshold) =>
    roundTrip(threshold, threshold + 5),
  );

  // its buffer below, on and past a mapped buffer (src/model/mapped-buffers.ts) as it grows in memory and as the
  // write buffer once in a file
  it.each([
    [1e9, 100_000, 1_000_000],
    [1e9, 65_536, 300_000],
    [3000, 1, 2_000_000],
    [500_000, 200_000, 1_100_000],
  ])("threshold %i, mapped buffers from %i bytes, of %i: the same pieces back", async (threshold, large, mapped) => {
    setMappedSizes(large, mapped);
    try {
      await roundTrip(threshold, large + 11);
    } finally {
      setMappedSizes();
    }
  });

  it("where no file can be made (a missing or read-only folder), the bytes stay in memory and read back the same", async () => {
    const dir = await tempDir();
    const store = new SpillBytes({ threshold: 10, dir: `${dir}/missing` });
    const pieces = Array.from({ length: 200 }, (_, i) => `${i}:${"é".repeat(i)}`);
    const at = pieces.map((text) => ({ text, ...store.appendText(text) }));
    expect(store.spilled).toBe(false);
    for (const p of at.reverse()) expect(store.text(p.at, p.bytes)).toBe(p.text);
    store.close();
  });

  it("a plan run through the file is the plan held in memory, and leaves nothing in the temporary folder", async () => {
    const dir = await tempDir();
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", TMPDIR: dir };
    const args = ["plan", fixturePath("abort-onboardings"), "-q", "--rate-limit", "0", "--format", "json"];
    const inMemory = await runCli(args, env);
    const spilled = await runCli(args, { ...env, FLOWRULES_PLAN_SPILL_BYTES: "0" });
    expect(spilled.code, spilled.stderr).toBe(inMemory.code);
    const changes = (text: string): unknown[] => (JSON.parse(text) as { changes: unknown[] }).changes;
    expect(changes(spilled.stdout).length).toBeGreaterThan(100);
    expect(changes(spilled.stdout)).toEqual(changes(inMemory.stdout));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("SIGTERM of a plan child while it writes the plan leaves nothing: the file it held had no name", async () => {
    const dir = await tempDir();
    const child = spawn(
      process.execPath,
      [CLI, "plan", fixturePath("abort-onboardings"), "-q", "--rate-limit", "0", "--format", "json"],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          FLOWRULES_BASE_URL: sb.baseUrl,
          FLOWRULES_API_KEY: "sandbox-admin",
          FLOWRULES_PLAN_SPILL_BYTES: "0",
          TMPDIR: dir,
        },
        // stdout not read: the plan (~230 KB) fills the pipe and the child waits, its changes in the file
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<NodeJS.Signals | number | null>((r) => child.on("close", (code, sig) => r(sig ?? code)));
    try {
      const pid = child.pid ?? 0;
      // waited for until it has lost its name: between the open and the unlink (one synchronous step of the child,
      // longer on a loaded machine) the file has one; a file that kept it never satisfies this, and the test fails
      await until(() => openIn(pid, dir).some((l) => l.endsWith("(deleted)")), 60_000, "the plan's temporary file");
      expect(openIn(pid, dir).every((l) => l.endsWith("(deleted)"))).toBe(true);
      expect(readdirSync(dir)).toEqual([]);
      child.kill("SIGTERM");
      child.stdout.resume();
      await exited;
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

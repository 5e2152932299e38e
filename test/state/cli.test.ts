/**
 * `plan --state DIR` and `apply --auto-approve --state DIR` through the built CLI against the sandbox: the summary
 * line, equality with a stateless plan, and bad input — an unwritable dir, a truncated or foreign state, another base
 * URL, a dir in use, two runs at once — each one line, before any request where the brief says so.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, runCliInShell, spawnCli, type CliResult } from "../helpers/cli.js";
import { fileURLToPath } from "node:url";
import { tempDir } from "./helpers.js";
import { comparable } from "../helpers/comparable-plan.js";

// the starter rule set: no validation warning on stderr, relative times in filters and a template using $now()
const RULES = fileURLToPath(new URL("../../rules/", import.meta.url));
let sb: RunningSandbox;
let work: { dir: string; remove(): Promise<void> };
let n = 0;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 400, seed: 3 });
  work = await tempDir("flowrules-state-cli-");
});
afterAll(async () => {
  await sb.close();
  await work.remove();
});
beforeEach(() => {
  dir = join(work.dir, `state-${++n}`);
  sb.clearRequests();
});

const env = (): Record<string, string> => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: "sandbox-admin",
  FLOWRULES_RATE_LIMIT: "0",
});

async function plan(args: string[], extra: Record<string, string> = {}) {
  sb.clearRequests();
  const r = await runCli(["plan", RULES, "--format", "json", ...args], { ...env(), ...extra });
  return { ...r, requests: sb.requests().length };
}

describe("plan --state", () => {
  it("plans what a stateless run plans, says what came from the state, and keeps no secret", async () => {
    const first = await plan(["--state", dir]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/^state: 0 instances from the state, [\d,]+ read again$/m);
    sb.simulate({ seed: 11, churn: 0.02 });
    const stateless = await plan([]);
    const second = await plan([], { FLOWRULES_STATE: dir });
    expect(second.code).toBe(0);
    expect(comparable(second.stdout)).toEqual(comparable(stateless.stdout));
    const line = /^state: ([\d,]+) instances from the state, ([\d,]+) read again$/m.exec(second.stderr);
    expect(line).not.toBeNull();
    expect(Number(line?.[1]?.replace(/,/g, ""))).toBeGreaterThan(100);
    expect(second.requests).toBeLessThan(stateless.requests / 2);
    const text = await readFile(join(dir, "state.jsonl"), "utf8");
    expect(text).not.toContain("sandbox-admin");
    expect(text).not.toContain("Api-Key");
    expect(existsSync(join(dir, "state.lock"))).toBe(false);
  }, 60_000);

  it("says in --explain-requests what the state answered", async () => {
    await plan(["--state", dir]);
    const r = await plan(["--state", dir, "--explain-requests"]);
    expect(r.stderr).toMatch(
      /^requests: workflow 1042, changes since the last run: list, 1 request: \d+ instances? updated since /m,
    );
    expect(r.stderr).toMatch(/^requests: workflow 1042, selection .*: state, \d+ requests?: \d+ from the state/m);
    // what the state answered of the planner's record reads and field values, and what reached the service
    const answers =
      /^requests: workflow 1042, records and field values: state, (\d+) requests?: (\d+) record reads? and (\d+) field values? answered from the state; (\d+) records? read and (\d+) field values? asked \((\d+) field pages?\)(?:; \d+ field values? of changed instances taken from their records read with values)?$/m.exec(
        r.stderr,
      );
    expect(answers).not.toBeNull();
    const [, requests, , kept, read, , pages] = (answers ?? []).map(Number);
    expect(requests).toBe((read ?? 0) + (pages ?? 0));
    expect(kept).toBeGreaterThan(0);
  }, 60_000);

  it("refuses an unwritable state dir in one line, before any request", async () => {
    const file = join(work.dir, `plain-file-${n}`);
    await writeFile(file, "not a dir");
    for (const bad of [file, join(file, "state")]) {
      const r = await plan(["--state", bad]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/^flowrules: cannot use the state dir .*plain-file-\d+.*: not a directory$/),
      ]);
      expect(r.requests).toBe(0);
    }
  });

  it("refuses a state made for another base URL in one line naming the dir, before any request", async () => {
    await plan(["--state", dir]);
    const file = join(dir, "state.jsonl");
    const [head = "", ...rest] = (await readFile(file, "utf8")).split("\n");
    const header = JSON.parse(head) as Record<string, unknown>;
    await writeFile(file, [JSON.stringify({ ...header, base_url: "https://other.example/api" }), ...rest].join("\n"));
    const r = await plan(["--state", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      `flowrules: the state dir ${dir} was made for another service (https://other.example/api), not ${sb.baseUrl}: use another --state dir`,
    ]);
    expect(r.requests).toBe(0);
  }, 60_000);

  it("a state made with another API key (which may see other instances) costs a full run and one warning, and keeps no key", async () => {
    // rules on the workflow both keys can read; the member key sees fewer of its instances
    const only = ["--rule", "auto-approve-small-expenses", "--rule", "overdue-expenses-by-tag"];
    const admin = await plan([...only, "--state", dir]);
    const member = { FLOWRULES_API_KEY: "sandbox-member" };
    const stateless = await plan(only, member);
    expect(stateless.code).toBe(0);
    expect(comparable(stateless.stdout)).not.toEqual(comparable(admin.stdout));
    const r = await plan([...only, "--state", dir], member);
    expect(r.code).toBe(0);
    expect(comparable(r.stdout)).toEqual(comparable(stateless.stdout));
    expect(r.stderr.split("\n").filter((l) => l.startsWith("warning: "))).toEqual([
      expect.stringMatching(/state\.jsonl was made with another API key: this run reads everything and rewrites it$/),
    ]);
    const text = await readFile(join(dir, "state.jsonl"), "utf8");
    expect(text).not.toContain("sandbox-member");
    // the same key again: the state is used
    const again = await plan([...only, "--state", dir], member);
    expect(again.stderr).not.toMatch(/^warning: /m);
    expect(again.stderr).toMatch(/^state: [1-9][\d,]* instances from the state/m);
  }, 60_000);

  it("a truncated, corrupt or foreign-format state costs a full run and one warning, never a wrong plan", async () => {
    await plan(["--state", dir]);
    const file = join(dir, "state.jsonl");
    const whole = await readFile(file, "utf8");
    const lines = whole.split("\n");
    const header = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
    // a list element whose id is not a number, and a listing's head counting one element more than it has
    const at = lines.findIndex((l) => l.startsWith('{"item":'));
    const item = JSON.parse(lines[at] ?? "{}") as { item: { v: { id: unknown } } };
    item.item.v.id = "one hundred";
    const headAt = lines.findIndex((l) => l.startsWith('{"listing":'));
    const head = JSON.parse(lines[headAt] ?? "{}") as { listing: { pages: Array<{ size: number }> } };
    const firstPage = head.listing.pages[0];
    if (firstPage) firstPage.size += 1;
    const replaced = (i: number, line: string): string => lines.map((l, j) => (j === i ? line : l)).join("\n");
    expect(at).toBeGreaterThan(0);
    expect(headAt).toBeGreaterThan(0);
    const cases: Array<[string, string, RegExp]> = [
      ["truncated", whole.slice(0, Math.floor(whole.length / 2)), /is not whole/],
      ["cut at a line's end", lines.slice(0, 3).join("\n") + "\n", /is not whole \(truncated: no last line\)/],
      [
        "a value of the wrong type",
        replaced(at, JSON.stringify(item)),
        new RegExp(`cannot be read in full \\(line ${at + 1}: not a list element\\)`),
      ],
      [
        "a listing missing an element",
        replaced(headAt, JSON.stringify(head)),
        new RegExp(
          `cannot be read in full \\(line ${headAt + 1}: listing \\d+ does not hold the elements its head counts\\)`,
        ),
      ],
      [
        "an older format",
        [JSON.stringify({ ...header, format_version: 2 }), ...lines.slice(1)].join("\n"),
        /is in another state format \(2, this flowrules writes 3\)/,
      ],
    ];
    for (const [what, text, warning] of cases) {
      sb.simulate({ seed: what.length, changes: 15 });
      await writeFile(file, text);
      const stateless = await plan([]);
      const r = await plan(["--state", dir]);
      expect(r.code, what).toBe(0);
      const warnings = r.stderr.split("\n").filter((l) => l.startsWith("warning: "));
      expect(warnings, what).toEqual([expect.stringMatching(warning)]);
      expect(r.stderr, what).toMatch(/^state: 0 instances from the state/m);
      expect(comparable(r.stdout), what).toEqual(comparable(stateless.stdout));
      // rewritten whole: its last line counts the lines before it
      const written = readFileSync(file, "utf8").trim().split("\n");
      expect(JSON.parse(written[written.length - 1] ?? "{}")).toEqual({
        end: { lines: written.length - 1, mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
    }
  }, 90_000);

  it("refuses a dir another live run holds, takes over the lock of a dead one", async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "state.lock"),
      JSON.stringify({
        pid: process.pid,
        host: (await import("node:os")).hostname(),
        since: "2026-01-01T00:00:00.000Z",
      }),
    );
    const held = await plan(["--state", dir]);
    expect(held.code).toBe(1);
    expect(held.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^flowrules: the state dir .*state-${n} is in use by another flowrules run \\(pid ${process.pid}, since 2026-01-01T00:00:00.000Z\\); try again when it has finished$`,
        ),
      ),
    ]);
    expect(held.requests).toBe(0);
    const dead = await deadPid();
    await writeFile(
      join(dir, "state.lock"),
      JSON.stringify({ pid: dead, host: (await import("node:os")).hostname(), since: "2026-01-01T00:00:00.000Z" }),
    );
    const after = await plan(["--state", dir]);
    expect(after.code).toBe(0);
    expect(after.stderr.split("\n").filter((l) => l.startsWith("warning: "))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warning: state: took over the stale lock .*state-${n}/state\\.lock \\(pid ${dead} on .*, started .* ago\\): its process ${dead} is gone$`,
        ),
      ),
    ]);
    expect(existsSync(join(dir, "state.lock"))).toBe(false);
  }, 60_000);

  it("two runs on one dir at once: each finishes or refuses in one line, and the state stays whole and right", async () => {
    await plan(["--state", dir]);
    sb.simulate({ seed: 77, changes: 20 });
    const runs = [0, 1, 2].map(() => spawnCli(["plan", RULES, "--format", "json", "--state", dir], env()).done);
    const results = await Promise.all(runs);
    for (const r of results) {
      if (r.code === 0) continue;
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/is in use by another flowrules run/)]);
    }
    expect(results.some((r) => r.code === 0)).toBe(true);
    const stateless = await plan([]);
    const next = await plan(["--state", dir]);
    expect(next.stderr).not.toMatch(/^warning: /m);
    expect(comparable(next.stdout)).toEqual(comparable(stateless.stdout));
  }, 90_000);

  it("a state that cannot be written (the file-size limit) leaves the previous one byte for byte: one warning naming the file, exit 0", async () => {
    await plan(["--state", dir]);
    const file = join(dir, "state.jsonl");
    const before = await readFile(file);
    expect(before.length).toBeGreaterThan(60 * 1024);
    sb.simulate({ seed: 4, changes: 10 });
    const stateless = await plan([]);
    // node ignores SIGXFSZ, so the write past the limit fails with EFBIG instead of killing the run
    const r = await limited(40, ["plan", RULES, "--format", "json", "--state", dir, "--full-refresh"]);
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("warning: "))).toEqual([
      `warning: state: cannot write the state file ${file}: file too large (the file-size limit, ulimit -f); the previous state is kept`,
    ]);
    expect(r.stderr).toMatch(/^state: 0 instances from the state, [\d,]+ read again; not written$/m);
    expect(comparable(r.stdout)).toEqual(comparable(stateless.stdout));
    expect((await readFile(file)).equals(before)).toBe(true);
    expect(await readdir(dir)).toEqual(["state.jsonl"]);
  }, 60_000);

  it("a state of a newer flowrules format is neither used nor overwritten: one warning, a stateless run", async () => {
    await plan(["--state", dir]);
    const file = join(dir, "state.jsonl");
    const [head = "", ...rest] = (await readFile(file, "utf8")).split("\n");
    const newer = [
      JSON.stringify({ ...(JSON.parse(head) as Record<string, unknown>), format_version: 4 }),
      ...rest,
    ].join("\n");
    await writeFile(file, newer);
    sb.simulate({ seed: 6, changes: 10 });
    const stateless = await plan([]);
    const r = await plan(["--state", dir]);
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("warning: "))).toEqual([
      `warning: state: ${file} was written by a newer flowrules (state format 4, this one reads and writes 3): this run reads everything and leaves the file as it is`,
    ]);
    expect(r.stderr).toMatch(/^state: 0 instances from the state, [\d,]+ read again; not written$/m);
    expect(comparable(r.stdout)).toEqual(comparable(stateless.stdout));
    expect(await readFile(file, "utf8")).toBe(newer);
    expect(await readdir(dir)).toEqual(["state.jsonl"]);
  }, 60_000);

  it("--resync-after and --full-refresh need a state dir; a bad duration is one line", async () => {
    const a = await plan(["--full-refresh"]);
    expect(a.code).toBe(1);
    expect(a.stderr.trim()).toBe("flowrules: --resync-after and --full-refresh need --state DIR (or FLOWRULES_STATE)");
    const b = await plan(["--state", dir, "--resync-after", "soon"]);
    expect(b.code).toBe(1);
    expect(b.stderr.trim()).toBe(
      'flowrules: --resync-after must be a duration such as 90s, 5m or 24h (a number and ms, s, m, h or d); got "soon"',
    );
    expect(sb.requests()).toHaveLength(0);
  });
});

describe("apply --auto-approve --state", () => {
  it("applies what it planned with the state; the next plan with state equals a stateless one", async () => {
    const cwd = join(work.dir, `apply-${n}`);
    await mkdir(cwd, { recursive: true });
    await plan(["--state", dir]);
    sb.simulate({ seed: 5, changes: 20 });
    const applied = await runCli(["apply", RULES, "--auto-approve", "--state", dir], env(), { cwd });
    expect(applied.stderr).toMatch(/^state: [\d,]+ instances from the state/m);
    expect(sb.requests().some((r) => r.method === "POST")).toBe(true);
    const stateless = await plan([]);
    const next = await plan(["--state", dir]);
    expect(comparable(next.stdout)).toEqual(comparable(stateless.stdout));
  }, 90_000);
});

/** The CLI under a file-size limit of `kb` KiB (`ulimit -f`), as a shell user would run it. */
function limited(kb: number, args: string[]): Promise<CliResult> {
  return runCliInShell(`ulimit -f ${kb}`, args, env());
}

/** The pid of a process that has exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(child.pid ?? 2 ** 22 + 1));
  });
}

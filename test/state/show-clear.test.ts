/**
 * `flowrules state show` and `flowrules state clear` through the built CLI: what a state dir holds and whether it
 * verifies with the current key (text and JSON), and clearing it — refused while a run or a watcher holds the dir.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { acquireLock } from "../../src/fs/lock.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { StateReport } from "../../src/state/show.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const RULES = fileURLToPath(new URL("../../rules/", import.meta.url));
let sb: RunningSandbox;
let work: string;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 150, seed: 9 }));
  work = await tempDir("flowrules-state-show-");
});

const env = (key = "sandbox-admin"): Record<string, string> => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: key,
  FLOWRULES_RATE_LIMIT: "0",
});

describe("flowrules state show", () => {
  it("says what the state holds and whether it verifies with this key; JSON too; an edited one does not verify", async () => {
    const dir = join(work, "shown");
    const empty = await runCli(["state", "show", "--state", dir], env());
    expect(empty.code).toBe(1);
    expect(empty.stderr.trim()).toBe(`flowrules: cannot read the state dir ${dir}: it does not exist`);
    expect((await runCli(["plan", RULES, "--state", dir], env())).code).toBe(0);
    const file = join(dir, "state.jsonl");
    const size = (await readFile(file)).length;

    const text = await runCli(["state", "show", "--state", dir], env());
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  file     ${file}, ${size.toLocaleString("en-US")} bytes, state format 3`);
    expect(text.stdout).toContain(`  service  ${sb.baseUrl}\n`);
    expect(text.stdout).toContain("  MAC      verifies with this API key\n");
    expect(text.stdout).toContain("  lock     free\n");
    expect(text.stdout).toMatch(
      /^ +1042 {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}\d{4}-\d\d-\d\dT[\d:.]+Z +[1-9]\d* +\d+ +\d+ +\d+$/m,
    );
    expect(text.stdout).not.toContain("sandbox-admin");

    const json = await runCli(["state", "show", "--state", dir, "--format", "json"], env("sandbox-member"));
    const report = JSON.parse(json.stdout) as StateReport;
    expect(report).toMatchObject({
      file,
      size_bytes: size,
      format_version: 3,
      base_url: sb.baseUrl,
      same_key: false,
      unusable: "was made with another API key",
      newer: false,
    });
    expect(report.workflows.map((w) => w.workflow)).toEqual([1042, 1043, 1044]);
    expect(report.workflows.every((w) => w.instances > 0 && w.bookmark !== null)).toBe(true);

    // one character of a cached value changed: it no longer verifies (and the next run would not use it)
    const whole = await readFile(file, "utf8");
    await writeFile(
      file,
      whole.replace(/"inputValue":(\d)/, (_, d: string) => `"inputValue":${d === "9" ? "1" : String(Number(d) + 1)}`),
    );
    const edited = JSON.parse(
      (await runCli(["state", "show", "--state", dir, "--format", "json"], env())).stdout,
    ) as StateReport;
    expect(edited).toMatchObject({
      same_key: true,
      verifies: false,
      unusable: expect.stringMatching(/^does not verify/),
    });
  }, 60_000);
});

describe("flowrules state clear", () => {
  it("removes the state under its lock; refuses while a run or a watcher holds the dir", async () => {
    const dir = join(work, "cleared");
    expect((await runCli(["plan", RULES, "--state", dir], env())).code).toBe(0);
    const file = join(dir, "state.jsonl");
    const size = (await readFile(file)).length;

    // a live run holds the dir (this process): refused in one line, nothing removed
    const held = acquireLock(join(dir, "state.lock"), { applying: "a run with --state", timeoutMs: 60_000 });
    const busy = await runCli(["state", "clear", "--state", dir], env());
    held.release();
    expect(busy.code).toBe(1);
    expect(busy.stderr.trim().split("\n")).toEqual([
      `flowrules: the state dir ${dir} is in use by another flowrules run (pid ${process.pid}, since ${held.owner.started_at}); try again when it has finished`,
    ]);
    expect(existsSync(file)).toBe(true);

    // a watcher runs on it (its lock under watch/): refused, nothing removed
    await mkdir(join(dir, "watch"), { recursive: true });
    await writeFile(
      join(dir, "watch", "lock"),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        started_at: new Date().toISOString(),
        applying: "watch rules/",
        token: "w",
      }),
    );
    const watched = await runCli(["state", "clear", "--state", dir], env());
    expect(watched.code).toBe(1);
    expect(watched.stderr.trim()).toMatch(
      new RegExp(
        `^flowrules: a watcher uses the state dir ${dir} \\(pid ${process.pid} on .*, applying watch rules/\\); stop it first, then clear the state$`,
      ),
    );
    expect(existsSync(file)).toBe(true);

    // the watcher gone: cleared, the watcher's journals kept, no lock left behind
    await writeFile(join(dir, "watch", "keep.jsonl"), "{}\n");
    await rm(join(dir, "watch", "lock"));
    const cleared = await runCli(["state", "clear", "--state", dir], env());
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toBe(
      `removed ${file} (${size.toLocaleString("en-US")} bytes): the next run with --state reads everything\n`,
    );
    expect((await readdir(dir)).sort()).toEqual(["watch"]);
    expect(await readdir(join(dir, "watch"))).toEqual(["keep.jsonl"]);
  }, 60_000);
});

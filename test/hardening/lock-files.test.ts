/**
 * Issue 28, point 2: `--lock-file` never removes a file flowrules did not write. Whatever sits at the lock path — a
 * notes file, the plan itself, a directory, a symbolic link, a device — however old, is refused with one line and
 * left exactly as it was.
 */
import { existsSync, lstatSync } from "node:fs";
import { mkdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireLock } from "../../src/fs/lock.js";
import { UserError } from "../../src/model/errors.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const LONG_AGO = new Date(Date.now() - 10 * 24 * 3600_000);

async function oldFile(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  await utimes(file, LONG_AGO, LONG_AGO);
  return file;
}

function refusal(file: string): unknown {
  try {
    acquireLock(file, { applying: "x", timeoutMs: 1000 }).release();
    return undefined;
  } catch (err) {
    return err;
  }
}

describe("a lock path holding something flowrules did not write", () => {
  it.each([
    ["a notes file", "notes.txt", "remember the milk\n"],
    ["a plan file", "plan-as-lock.json", JSON.stringify({ format_version: 1, changes: [] })],
    ["an empty file", "empty.lock", ""],
    ["JSON that is not an owner", "other.lock", JSON.stringify({ pid: "12", host: 3 })],
  ])("(%s, ten days old) is refused and left as it was", async (_what, name, text) => {
    const file = await oldFile(name, text);
    const err = refusal(file);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(
      /is not a lock flowrules wrote \(its content is not a flowrules lock\), so it is left alone/,
    );
    expect((err as Error).message).not.toContain("\n");
    expect(await readFile(file, "utf8")).toBe(text);
  });

  it("a directory, a symbolic link and a device are refused and left in place", async () => {
    const sub = join(dir, "a-dir");
    await mkdir(sub);
    await writeFile(join(sub, "keep.txt"), "keep");
    const target = await oldFile("target.txt", "target");
    const link = join(dir, "link.lock");
    await symlink(target, link);
    for (const [file, kind] of [
      [sub, "a directory"],
      [link, "a symbolic link"],
      ["/dev/null", "not a regular file"],
    ] as const) {
      const err = refusal(file);
      expect(err, file).toBeInstanceOf(UserError);
      expect((err as Error).message).toContain(`(it is ${kind})`);
    }
    expect(await readFile(join(sub, "keep.txt"), "utf8")).toBe("keep");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await readFile(target, "utf8")).toBe("target");
    expect(lstatSync("/dev/null").isCharacterDevice()).toBe(true);
  });
});

describe("the CLI with --lock-file naming the plan itself", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 40, seed: 282 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("refuses with one line, sends nothing and keeps the plan", async () => {
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    const text = await readFile(file, "utf8");
    await utimes(file, LONG_AGO, LONG_AGO);
    sb.clearRequests();
    const r = await runCli(
      ["apply", file, "--lock-file", file, "--lock-timeout", "1s"],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" },
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/is not a lock flowrules wrote/);
    expect(existsSync(file)).toBe(true);
    expect(await readFile(file, "utf8")).toBe(text);
    expect(sb.requests().filter((q) => q.method === "POST")).toEqual([]);
  });
});

/**
 * Issue 35, points 4 and 8: what stands at an output path (`plan --out`, `--report-dir`, `test --junit`, `pull
 * --workflows`) is never replaced by something else. A folder, a device or a FIFO is refused in one line before any
 * request; a symbolic link has the file it leads to replaced and stays a link; `-`, `/dev/stdout` and `/dev/fd/N` are
 * written into; a write that fails part-way (`ulimit -f`, a full device) leaves the previous file byte for byte and
 * names the file (src/fs/write-file.ts, docs/safety.md "Output files").
 */
import { spawn } from "node:child_process";
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { checkOutputFile, writeFileAtomic } from "../../src/fs/write-file.js";
import { beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, runCliInShell, type CliResult } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const RULES = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    select: { status: running, active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111 }
  - name: expense-report
    workflow: 1042
    select: { status: [running, completed] }
    actions:
      - report: { group_by: tags, columns: [id, name, status], title: Expense claims }
`;

const TEST_FILE = `version: 1
now: "2026-03-02T09:00:00Z"
instances:
  - id: 1
    name: Taxi to the airport
    active_step: 20111
tests:
  - name: a running claim waiting at 20111 is approved
    rule: approve-small
    expect:
      matched: [1]
`;

let sb: RunningSandbox;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 120, seed: 35 }));
  dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), RULES);
  await writeFile(join(dir, "rules.test.yaml"), TEST_FILE);
  // a folder where the rules do not even exist: the output is refused before they would be read
  await mkdir(join(dir, "cli", "pipe-or-folder"), { recursive: true });
  env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
});

/** The CLI under bash, with `setup` before it (`ulimit -f 8`, `exec 3>/dev/full`); args are quoted. */
function runShell(setup: string, args: string[]): Promise<CliResult> {
  return runCliInShell(setup, args, env, { cwd: dir });
}

function mkfifo(path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    spawn("mkfifo", [path]).on("close", (c) => (c === 0 ? resolve() : reject(new Error(`mkfifo ${c}`)))),
  );
}

const strays = async (d: string): Promise<string[]> => (await readdir(d)).filter((f) => f.endsWith(".tmp"));
const oneLine = (r: CliResult): string[] => r.stderr.trim().split("\n");

describe("a target that is not a regular file is refused before any request", () => {
  it.each([
    [
      "plan --out on a device (/dev/full)",
      ["plan", "rules.yaml", "-q", "--out", "/dev/full"],
      /^flowrules: cannot write \/dev\/full: it is a character device, not a regular file/,
    ],
    [
      "plan --report-dir on a file",
      ["plan", "rules.yaml", "-q", "--report-dir", "rules.yaml"],
      /^flowrules: cannot write into rules\.yaml: it is a file, not a folder$/,
    ],
    [
      "pull --workflows on a folder",
      ["pull", "rules.yaml", "--workflows", "/tmp"],
      /^flowrules: cannot write \/tmp: it is a folder; name a file in it$/,
    ],
    [
      "test --junit on a folder",
      ["test", "rules.yaml", "--junit", "/tmp"],
      /^flowrules: cannot write \/tmp: it is a folder; name a file in it$/,
    ],
  ])("%s", async (_what, args, message) => {
    const device = await stat("/dev/full");
    sb.clearRequests();
    const r = await runCli(args, env, { cwd: dir });
    expect(r.code).toBe(1);
    expect(oneLine(r)).toEqual([expect.stringMatching(message)]);
    expect(r.stdout).toBe("");
    expect(sb.requests()).toEqual([]);
    // the device is still the device (as root, a rename over it made it a regular file)
    const after = await stat("/dev/full");
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(device.rdev);
  });

  it.each([
    [
      "a folder",
      async () => {
        await mkdir(join(dir, "folder"), { recursive: true });
        return "folder";
      },
      /^cannot write folder: it is a folder; name a file in it$/,
    ],
    ["the root of /tmp", async () => "/tmp", /^cannot write \/tmp: it is a folder/],
    [
      "a link to a folder",
      async () => {
        await mkdir(join(dir, "folder"), { recursive: true });
        await symlink("folder", join(dir, "to-folder"));
        return "to-folder";
      },
      /^cannot write to-folder \(a link to .*folder\): it is a folder/,
    ],
    [
      "a FIFO",
      async () => {
        await mkfifo(join(dir, "pipe"));
        return "pipe";
      },
      /^cannot write pipe: it is a named pipe \(FIFO\), not a regular file/,
    ],
    [
      "a file in a folder that does not exist",
      async () => "no-such/plan.json",
      /^cannot write no-such\/plan\.json: its folder does not exist \(ENOENT\)$/,
    ],
    [
      "a link loop",
      async () => {
        await symlink("loop-b", join(dir, "loop-a"));
        await symlink("loop-a", join(dir, "loop-b"));
        return "loop-a";
      },
      /^cannot write loop-a: its symbolic links lead in a loop \(ELOOP\)$/,
    ],
  ])("checkOutputFile and writeFileAtomic refuse %s, and leave it as it was", async (_what, make, message) => {
    const name = await make();
    const path = isAbsolute(name) ? name : join(dir, name);
    const before = await lstat(path).catch(() => undefined);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      await expect(checkOutputFile(name)).rejects.toThrow(message);
      await expect(writeFileAtomic(name, "x")).rejects.toThrow(message);
    } finally {
      process.chdir(cwd);
    }
    const after = await lstat(path).catch(() => undefined);
    expect(after?.mode).toBe(before?.mode);
    expect(await strays(dir)).toEqual([]);
  });

  it("the CLI checks --out before the rules load and before any request (plan and plan --compare)", async () => {
    for (const extra of [[], ["--compare", "HEAD"]]) {
      sb.clearRequests();
      const r = await runCli(["plan", "rules.yaml", "-q", "--out", "pipe-or-folder", ...extra], env, {
        cwd: join(dir, "cli"),
      });
      expect(r.code).toBe(1);
      expect(oneLine(r)).toEqual(["flowrules: cannot write pipe-or-folder: it is a folder; name a file in it"]);
      expect(sb.requests()).toEqual([]);
    }
  });
});

describe("links and descriptors", () => {
  it("a symbolic link stays a link; the file it leads to is replaced whole", async () => {
    await mkdir(join(dir, "elsewhere"), { recursive: true });
    await writeFile(join(dir, "elsewhere", "real.json"), "old");
    await chmod(join(dir, "elsewhere", "real.json"), 0o640);
    await symlink(join(dir, "elsewhere", "real.json"), join(dir, "link.json"));
    const r = await runCli(["plan", "rules.yaml", "-q", "--out", "link.json"], env, { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(await readlink(join(dir, "link.json"))).toBe(join(dir, "elsewhere", "real.json"));
    expect(JSON.parse(await readFile(join(dir, "elsewhere", "real.json"), "utf8"))).toMatchObject({
      format_version: 1,
      digest: expect.stringMatching(/^sha256:/),
    });
    // replaced with its permissions kept
    expect((await stat(join(dir, "elsewhere", "real.json"))).mode & 0o777).toBe(0o640);
    // a link to a file not there yet (relative, through a second link) creates it where the links lead
    await symlink("elsewhere/hop.json", join(dir, "dangling.json"));
    await symlink("new.json", join(dir, "elsewhere", "hop.json"));
    await writeFileAtomic(join(dir, "dangling.json"), "fresh");
    expect((await lstat(join(dir, "dangling.json"))).isSymbolicLink()).toBe(true);
    expect((await lstat(join(dir, "elsewhere", "hop.json"))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, "elsewhere", "new.json"), "utf8")).toBe("fresh");
    expect(await strays(join(dir, "elsewhere"))).toEqual([]);
    expect(await strays(dir)).toEqual([]);
  });

  it("/dev/stdout and /dev/fd/N are written into; on stdout the plan file is the one document there", async () => {
    const r = await runCli(["plan", "rules.yaml", "-q", "--format", "markdown", "--out", "/dev/stdout"], env, {
      cwd: dir,
    });
    expect(r.code, r.stderr).toBe(0);
    // the view goes to stderr, as with `--out -`
    expect(JSON.parse(r.stdout)).toMatchObject({ format_version: 1 });
    expect(r.stderr).toMatch(/^## flowrules plan/m);
    // a descriptor this process was given (as `--out >(jq …)` gives one): written into, never opened or replaced
    const fd = await runShell("exec 3>fd3.json", ["plan", "rules.yaml", "-q", "--out", "/dev/fd/3"]);
    expect(fd.code, fd.stderr).toBe(0);
    expect(JSON.parse(await readFile(join(dir, "fd3.json"), "utf8"))).toMatchObject({ format_version: 1 });
  });

  it("a descriptor that cannot take the bytes is one line naming it (a full device)", async () => {
    const r = await runShell("exec 3>/dev/full", ["plan", "rules.yaml", "-q", "--out", "/dev/fd/3"]);
    expect(r.code).toBe(1);
    expect(oneLine(r)).toEqual(["flowrules: cannot write /dev/fd/3: the disk is full (ENOSPC)"]);
    const readOnly = await runShell("exec 3<rules.yaml", ["plan", "rules.yaml", "-q", "--out", "/dev/fd/3"]);
    expect(oneLine(readOnly)).toEqual(["flowrules: cannot write /dev/fd/3: the descriptor is open for reading only"]);
    const unopened = await runCli(["plan", "rules.yaml", "-q", "--out", "/dev/fd/200"], env, { cwd: dir });
    expect(oneLine(unopened)).toEqual(["flowrules: cannot write /dev/fd/200: no such open file descriptor (EBADF)"]);
  });
});

describe("a plan file write that fails part-way", () => {
  it("leaves the previous plan byte for byte and names the file (ulimit -f; SIGXFSZ is ignored by node, the write gets EFBIG)", async () => {
    // the previous file: any bytes bigger than the limit (8 KiB), with a byte that is not text
    const before = Buffer.concat([Buffer.from("previous plan\n"), Buffer.alloc(20_000, 0xfe)]);
    await writeFile(join(dir, "plan.json"), before);
    const r = await runShell("ulimit -f 8", ["plan", "rules.yaml", "-q", "--out", "plan.json"]);
    expect(r.code).toBe(1);
    expect(oneLine(r)).toEqual([
      "flowrules: cannot write plan.json: the file is larger than this process may write (EFBIG)",
    ]);
    expect(Buffer.compare(await readFile(join(dir, "plan.json")), before)).toBe(0);
    expect(await strays(dir)).toEqual([]);
  });
});

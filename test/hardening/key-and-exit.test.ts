/**
 * Issue 28, point 1: a key the HTTP header cannot carry is refused up front with one line naming the variable (no
 * silent exit 0), and a run whose event loop runs dry before its command settles exits 1 with one line.
 */
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeyProblem } from "../../src/api/key-check.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { MIXED_RULES, tempDir } from "../apply/helpers.js";
import { CLI, runCli } from "../helpers/cli.js";

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 40, seed: 28 });
  dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), MIXED_RULES);
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

const BAD_KEYS: Array<[string, string]> = [
  ["zero-width space", "sandbox-admin\u200b"],
  ["non-breaking space", "sandbox\u00a0admin"],
  ["accented letter", "sandbox-admín"],
  ["tab", "sandbox-admin\t"],
  ["inner space", "sandbox admin"],
];

describe("an API key with a character a header cannot carry", () => {
  it.each(BAD_KEYS)("(%s) is refused before any request, with one line naming the variable", async (_what, key) => {
    const before = sb.requests().length;
    for (const args of [
      ["plan", "rules.yaml", "--detailed-exitcode", "--out", "plan.json"],
      ["apply", "rules.yaml", "--auto-approve"],
    ]) {
      const r = await runCli(args, { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: key }, { cwd: dir });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe("");
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/FLOWRULES_API_KEY/);
      // the message shows where, never the key
      expect(lines[0]).not.toContain("sandbox");
    }
    expect(sb.requests().length).toBe(before);
  });

  it("a key of visible ASCII passes the check", () => {
    expect(apiKeyProblem("sandbox-admin")).toBeUndefined();
    expect(apiKeyProblem("k-0123456789abcdef!~")).toBeUndefined();
    expect(apiKeyProblem("key\u200b")).toMatch(/\(U\+200B\) at position 4 of 4/);
  });
});

describe("a run whose event loop runs dry with its command unsettled", () => {
  const guard = fileURLToPath(new URL("../../dist/cli/unfinished.js", import.meta.url));
  const run = (settles: boolean): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve, reject) => {
      const script = `const m = await import(${JSON.stringify(guard)}); let done = false;
m.failIfUnfinished(() => done, (s) => process.stderr.write(s));
${settles ? "await Promise.resolve(); done = true;" : "new Promise(() => {}).then(() => (done = true));"}`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });

  it("exits 1 with one line", async () => {
    const r = await run(false);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/work unfinished/);
  });

  it("leaves a run that settled alone", async () => {
    const r = await run(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });
});

describe("the build", () => {
  // `npm run build` (which `npm test` runs first) leaves the bin executable, so `npx flowrules` works after a rebuild
  it("leaves dist/cli/index.js executable", () => {
    expect(statSync(CLI).mode & 0o111).toBe(0o111);
  });
});

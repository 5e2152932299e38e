/**
 * Issue 28, point 7 (catalogs, reports, JUnit files; the plan file has its own writer): a run that fails while it
 * writes leaves the previous file as it was; a journal that cannot be written stops the apply, naming it. The CLI runs under a file size limit of 512 bytes (`ulimit -f 1`), so
 * every write of a bigger file fails part-way, as on a full disk; the error names the file.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";
import { runCli, runCliInShell, type CliResult } from "../helpers/cli.js";

const RULES = `${MIXED_RULES}  - name: expense-report
    workflow: 1042
    select: { status: [running, completed] }
    actions:
      - report: { group_by: tags, columns: [id, name, status], title: Expense claims }
`;

let sb: RunningSandbox;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 150, seed: 287 });
  dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), RULES);
  env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with files limited to 512 bytes (one block of `ulimit -f`). */
function runLimited(args: string[]): Promise<CliResult> {
  return runCliInShell("ulimit -f 1", args, env, { cwd: dir });
}

const strays = async (d: string): Promise<string[]> => (await readdir(d)).filter((f) => f.endsWith(".tmp"));

describe("a write that fails part-way", () => {
  it("keeps the previous workflow catalog whole, names the file, leaves no temporary file", async () => {
    const first = await runCli(["pull", "rules.yaml", "--workflows", "catalog.json"], env, { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const before = await readFile(join(dir, "catalog.json"), "utf8");
    expect(before.length).toBeGreaterThan(512);
    const r = await runLimited(["pull", "rules.yaml", "--workflows", "catalog.json"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write catalog\.json: the file is larger than this process may write \(EFBIG\)/);
    expect(await readFile(join(dir, "catalog.json"), "utf8")).toBe(before);
    expect(await strays(dir)).toEqual([]);
  });

  it("keeps the previous report files whole", async () => {
    const first = await runCli(["plan", "rules.yaml", "--report-dir", "reports", "-q"], env, { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const files = (await readdir(join(dir, "reports"))).sort();
    expect(files).toEqual(["expense-report.csv", "expense-report.json"]);
    const before = await Promise.all(files.map((f) => readFile(join(dir, "reports", f), "utf8")));
    expect(Math.max(...before.map((t) => t.length))).toBeGreaterThan(512);
    const r = await runLimited(["plan", "rules.yaml", "--report-dir", "reports", "-q"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write reports\/expense-report\.(csv|json): .*\(EFBIG\)/);
    expect(await Promise.all(files.map((f) => readFile(join(dir, "reports", f), "utf8")))).toEqual(before);
    expect(await strays(join(dir, "reports"))).toEqual([]);
  });
});

describe("a journal that cannot be written", () => {
  it("stops the apply with one line naming the journal; no change is sent without its intent journalled", async () => {
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    sb.clearRequests();
    const r = await runLimited(["apply", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /flowrules: cannot write the journal .*plan\.json\.journal\.jsonl: the file is larger than this process may write \(EFBIG\)/,
    );
    const journal = await readFile(`${file}.journal.jsonl`, "utf8");
    const intents = journal.split("\n").filter((l) => l.includes('"event":"intent"')).length;
    const sent = sb.requests().filter((q) => q.method === "POST");
    expect(sent.length).toBeLessThanOrEqual(intents);
  });
});

describe("writeFileAtomic", () => {
  it("replaces a file whole and names the file when it cannot", async () => {
    const file = join(dir, "out.txt");
    await writeFileAtomic(file, "one");
    await writeFileAtomic(file, "two");
    expect(await readFile(file, "utf8")).toBe("two");
    await expect(writeFileAtomic(join(dir, "no-such-dir", "x.txt"), "x")).rejects.toThrow(
      /^cannot write .*no-such-dir\/x\.txt: its folder does not exist \(ENOENT\)$/,
    );
    expect(await strays(dir)).toEqual([]);
  });
});

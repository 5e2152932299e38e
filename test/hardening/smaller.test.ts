/**
 * Issue 28, point 11 (the smaller holes): number settings in plain decimal only, rule files that are not UTF-8
 * refused with file, line and column, service names kept inside `init`'s YAML comments, and a journal of another
 * plan said in one line.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSettings } from "../../src/cli/settings.js";

/** The connection settings as the CLI resolves them (flag > environment > profile > default). */
const connectionSettings = (opts: Record<string, unknown>, env: Record<string, string>) =>
  runSettings(opts, env).connection;
import { starterRules, starterTests } from "../../src/commands/init.js";
import { loadRules } from "../../src/rules/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { ABORT_RULES, captureIO, makePlan, MIXED_RULES, runApply, tempDir } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("number settings", () => {
  const env = (rate: string) => ({
    FLOWRULES_BASE_URL: "http://127.0.0.1:4010/api",
    FLOWRULES_API_KEY: "sandbox-admin",
    FLOWRULES_RATE_LIMIT: rate,
  });
  it.each(["0x10", "1e3", "0b101", "12.0", "+5", "-1", "1_000", "١٢"])("FLOWRULES_RATE_LIMIT=%s is refused", (rate) => {
    expect(() => connectionSettings({}, env(rate))).toThrow(/FLOWRULES_RATE_LIMIT must be a whole number ≥ 0, got/);
  });
  it("plain decimals are read, flags too; hex or exponent flags are refused", () => {
    expect(connectionSettings({}, env(" 16 ")).rateLimitPerMin).toBe(16);
    expect(connectionSettings({ concurrency: "8", timeout: "5s" }, env("0"))).toMatchObject({
      concurrency: 8,
      timeoutMs: 5000,
    });
    expect(() => connectionSettings({ concurrency: "0x4" }, env("16"))).toThrow(/--concurrency must be a whole number/);
    expect(() => connectionSettings({ timeout: "3e4" }, env("16"))).toThrow(
      /^--timeout must be a duration such as 90s, 5m or 24h/,
    );
  });
});

describe("rule files that are not UTF-8", () => {
  it("are refused naming the file, the line and the column, never read with U+FFFD in them", async () => {
    const file = join(dir, "latin1.yaml");
    // "Geprüft" written in Latin-1 on line 11: 0xFC is no UTF-8
    const text = MIXED_RULES.replace('"Approved by flowrules"', '"Gepr\u00fcft"');
    await writeFile(file, Buffer.from(text, "latin1"));
    const r = await loadRules([file]);
    expect(r.ruleSet).toBeUndefined();
    const line = text.split("\n").findIndex((l) => l.includes("Gepr")) + 1;
    const col = (text.split("\n")[line - 1] ?? "").indexOf("ü") + 1;
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        file,
        line,
        col,
        severity: "error",
        message: `the file is not UTF-8 text (byte 0xFC at line ${line}, column ${col}): save it as UTF-8`,
      }),
    ]);
    const cli = await runCli(["validate", file]);
    expect(cli.code).toBe(1);
    expect(cli.stdout + cli.stderr).toContain(`${file}:${line}:${col}`);
  });

  it("UTF-8 with a byte order mark or any characters is read as before", async () => {
    const file = join(dir, "utf8.yaml");
    await writeFile(file, `\ufeff${MIXED_RULES.replace('"Approved by flowrules"', '"Geprüft ✓ 承認"')}`);
    const r = await loadRules([file]);
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(r.ruleSet?.rules).toHaveLength(3);
  });
});

describe("init with hostile workflow names", () => {
  it("keeps each name inside its comment: the files parse to one rule and one test, names intact", () => {
    const name = "Claims\nversion: 2\nrules: []\r\u2028# x";
    const w = { id: 7, name, folder: { id: 1, name: "F\nX: 1" } };
    const rules = starterRules(w, [w], undefined, "./schema.json");
    const doc = parse(rules) as { version: number; rules: Array<{ workflow: { name: string } }> };
    expect(doc.version).toBe(1);
    expect(doc.rules).toHaveLength(1);
    expect(doc.rules[0]?.workflow.name).toBe(name);
    for (const line of rules.split("\n").filter((l) => l.startsWith("#"))) expect(line).not.toMatch(/[\r\u2028]/);
    const tests = parse(starterTests(w, [w], "./schema.json", new Date("2026-01-01T00:00:00Z"))) as {
      version: number;
      tests: unknown[];
    };
    expect(tests.version).toBe(1);
    expect(tests.tests).toHaveLength(1);
  });
});

describe("a journal of another plan", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 60, seed: 2811 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("is said in one warning line, and this plan is applied in full", async () => {
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    const a = await makePlan(sb, join(dir, "a"), ABORT_RULES);
    const b = await makePlan(sb, join(dir, "b"), MIXED_RULES.replace(/ {2}- name: abort-onboardings[\s\S]*$/, ""));
    const journal = join(dir, "shared.jsonl");
    expect(await runApply(sb, dir, { paths: [a.file], journal })).toBe(2);
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [b.file], journal }, io)).toBe(2);
    const warnings = io
      .err()
      .split("\n")
      .filter((l) => l.includes("warning"));
    expect(warnings).toEqual([
      `flowrules: warning: the journal shared.jsonl records 1 run(s) of other plans and none of this one; they are not taken into account`,
    ]);
    expect(io.out()).toMatch(new RegExp(`${b.plan.changes.length} changes? applied`));
    // a second run of the same plan is a resume, with no warning
    const again = captureIO();
    await runApply(sb, dir, { paths: [b.file], journal }, again);
    expect(again.err()).not.toMatch(/warning/);
  });
});

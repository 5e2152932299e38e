/** `flowrules validate`: exit codes, the three formats, colours, and no stack traces. */
import { execFileSync, spawnSync } from "node:child_process";
import { Command } from "commander";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { registerValidate } from "../../src/cli/verbs/validate/flags.js";
import { runValidate } from "../../src/commands/validate.js";
import { useColor, type CommandIO } from "../../src/log/command-io.js";
import { github } from "../../src/render/validate/github.js";
import { text } from "../../src/render/validate/text.js";
import type { Diagnostic } from "../../src/rules/types.js";
import { FIXTURES } from "./helpers.js";

const BROKEN = `${FIXTURES}/broken`;

async function runCli(args: string[]): Promise<{ out: string; code: number | undefined }> {
  const program = new Command().exitOverride();
  registerValidate(program);
  let out = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const before = process.exitCode;
  try {
    await program.parseAsync(["node", "flowrules", "validate", ...args]);
    return { out, code: process.exitCode === undefined ? undefined : Number(process.exitCode) };
  } finally {
    spy.mockRestore();
    process.exitCode = before;
  }
}

describe("validate command (in process)", () => {
  it("defaults to rules/ and exits 0 on the starter set", async () => {
    const { out, code } = await runCli([]);
    expect(code).toBe(0);
    expect(out).toMatch(/^✔ valid in 3 files, 4 rules\n$/);
  });

  it("text: file:line:col  error  message  (rule), then a count line; exit 1", async () => {
    const { out, code } = await runCli([`${BROKEN}/unknown-key.yaml`, `${BROKEN}/limit-zero.yaml`]);
    expect(code).toBe(1);
    expect(out.split("\n")).toEqual([
      `${BROKEN}/unknown-key.yaml:5:5  error  unknown key "when_" in rule "typo"; did you mean "when"?  (typo)`,
      `${BROKEN}/limit-zero.yaml:6:30  error  "limits.max_instances" in rule "limit-zero" must be at least 1, not 0  (limit-zero)`,
      "",
      "✖ 2 errors, 0 warnings",
      "",
    ]);
  });

  it("json: one parseable document", async () => {
    const { out, code } = await runCli(["--format", "json", `${BROKEN}/bad-jsonata.yaml`]);
    expect(code).toBe(1);
    const doc = JSON.parse(out) as { valid: boolean; errors: number; diagnostics: Diagnostic[] };
    expect(doc).toMatchObject({ valid: false, errors: 1, warnings: 0 });
    expect(doc.diagnostics[0]).toMatchObject({ file: `${BROKEN}/bad-jsonata.yaml`, line: 7, col: 27, severity: "error", code: "jsonata", rule: "bad-jsonata" });
  });

  it("json on a valid set says so and counts files and rules", async () => {
    const { out, code } = await runCli(["--format", "json", "rules/"]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ valid: true, errors: 0, warnings: 0, files: 3, rules: 4, diagnostics: [] });
  });

  it("github: ::error annotations with file, line and col", async () => {
    const { out, code } = await runCli(["--format", "github", `${BROKEN}/page-size.yaml`]);
    expect(code).toBe(1);
    expect(out.split("\n")[0]).toBe(
      `::error file=${BROKEN}/page-size.yaml,line=7,col=7,title=flowrules engine-owned (paging)::"page_size" is not allowed in select of rule "paging": the engine owns paging and ordering (it asks for 500 a page and follows the cursor)`,
    );
  });

  it("warnings alone exit 0", async () => {
    const r = await runValidate([`${FIXTURES}/warnings`], { format: "text" });
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/warning {2}rule "late" completes step 20111, but its select\.status/);
    expect(r.output).toMatch(/✔ valid in 1 file, 1 rule \(1 warning\)/);
  });

  it("a missing path is an error without a line", async () => {
    const r = await runValidate(["nope/"], { format: "text" });
    expect(r.exitCode).toBe(1);
    expect(r.output.split("\n")[0]).toBe("nope/  error  no such file or folder: nope/");
  });

  it("rejects an unknown format", async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registerValidate(program);
    await expect(program.parseAsync(["node", "flowrules", "validate", "--format", "xml"])).rejects.toThrow(/xml/);
  });
});

describe("colours", () => {
  it("only on a TTY, never with NO_COLOR or TERM=dumb; --color and --no-color win over both", () => {
    const io = (stdoutIsTTY: boolean, env: NodeJS.ProcessEnv, color?: boolean): CommandIO => ({
      stdout: () => undefined,
      stderr: () => undefined,
      env,
      stdoutIsTTY,
      stderrIsTTY: stdoutIsTTY,
      ...(color !== undefined ? { color } : {}),
    });
    expect(useColor(io(true, {}))).toBe(true);
    expect(useColor(io(false, {}))).toBe(false);
    expect(useColor(io(true, { NO_COLOR: "1" }))).toBe(false);
    expect(useColor(io(true, { NO_COLOR: "" }))).toBe(true);
    expect(useColor(io(true, { TERM: "dumb" }))).toBe(false);
    expect(useColor(io(true, {}, false))).toBe(false);
    expect(useColor(io(false, { NO_COLOR: "1" }, true))).toBe(true);
  });

  it("the text format colours only when asked", () => {
    const d: Diagnostic[] = [{ file: "a.yaml", line: 1, col: 2, severity: "error", code: "x", message: "m" }];
    expect(text(d, { color: false })).not.toMatch(/\x1b\[/);
    expect(text(d, { color: true })).toMatch(/\x1b\[31merror/);
  });

  it("github escapes newlines, % and property separators", () => {
    const d: Diagnostic[] = [{ file: "a,b:c.yaml", line: 1, col: 2, severity: "warning", code: "x", message: "50%\nnext" }];
    expect(github(d, { color: false }).split("\n")[0]).toBe("::warning file=a%2Cb%3Ac.yaml,line=1,col=2,title=flowrules x::50%25%0Anext");
  });
});

describe("validate command (built binary)", () => {
  beforeAll(() => {
    // other parts of the tree may have type errors while they are being written; tsc still emits
    try {
      execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "ignore" });
    } catch {
      /* emitted anyway */
    }
  }, 120_000);

  const run = (args: string[]) => spawnSync(process.execPath, ["dist/cli/index.js", "validate", ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });

  it("exit 0 on the starter rules, 1 on a broken file, no stack trace", () => {
    const ok = run([]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain("✔ valid");
    const bad = run([`${BROKEN}/bad-yaml.yaml`, "--format", "github"]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^::error file=.*bad-yaml\.yaml,line=4,col=15/);
    expect(bad.stdout + bad.stderr).not.toMatch(/\n\s+at /);
  });

  it("files that are not rule files are located errors, not crashes", () => {
    const r = run(["dist/cli/index.js.map", "/dev/null"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("");
    expect(r.stdout).not.toMatch(/\n\s+at /);
  });
});

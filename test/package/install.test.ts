/**
 * README.md, "Setup": installed with npm, `flowrules` is a command on PATH. The packed tarball (what `npm pack`, and
 * the registry, ship) installed globally into a temporary prefix runs `--version`, `validate` of its starter rules, a
 * completion Tab, and the bash completion it prints completes rule names through that same command; `npm install -g .`
 * links this clone's build. The dependencies come from npm's cache (`npm ci` filled it) and the registry only for
 * what the cache lacks. Needs `npm run build` first (npm test does); this file takes about 10–20 s.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { VERSION } from "../../src/model/version.js";
import { tempDir } from "../helpers/temp.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; bin: Record<string, string> };

/** `npm install -g` into `prefix`: the cache first (--prefer-offline), no audit, no funding notice. */
async function installGlobally(prefix: string, what: string): Promise<void> {
  await run("npm", ["install", "--global", "--prefix", prefix, what, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: ROOT,
    timeout: 150_000,
  });
}

/** Runs `flowrules` as a shell finds it: by name, on a PATH that starts with the prefix's bin/. */
function onPath(prefix: string): (args: string[], cwd: string) => Promise<string> {
  const env = { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}`, NO_COLOR: "1" };
  return async (args, cwd) => (await run("flowrules", args, { cwd, env })).stdout;
}

/** The rule names bash completes for `flowrules plan --rule ⇥` with the script `flowrules completion bash` prints. */
async function bashRuleNames(prefix: string, cwd: string): Promise<string[]> {
  const script = [
    "source <(flowrules completion bash)",
    // the function the script registers for flowrules, whatever its name
    "fn=$(complete -p flowrules | sed -E 's/.*-F ([^ ]+).*/\\1/')",
    'COMP_WORDS=(flowrules plan --rule ""); COMP_CWORD=3; COMP_LINE="flowrules plan --rule "; COMP_POINT=${#COMP_LINE}',
    '"$fn" flowrules "" --rule',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join("\n");
  const env = { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}` };
  const { stdout } = await run("bash", ["-c", script], { cwd, env });
  return stdout.split("\n").filter(Boolean).sort();
}

describe("installed with npm (README.md, Setup)", () => {
  it("prepack builds dist/, so a packed tarball always holds the CLI", () => {
    expect(manifest.scripts.prepack).toBe("npm run build");
    expect(manifest.bin).toEqual({ flowrules: "dist/cli/index.js" });
  });

  it("npm pack, then npm install -g of the tarball: flowrules on PATH, its version, validate, a Tab and bash completion", { timeout: 180_000 }, async () => {
    const dir = await tempDir("flowrules-install-");
    // --ignore-scripts: prepack would rebuild dist/ under the feet of the other test files (npm test built it)
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, "--silent"], { cwd: ROOT, timeout: 60_000 });
    const tarball = join(dir, stdout.trim().split("\n").pop() ?? "");
    const prefix = join(dir, "prefix");
    await installGlobally(prefix, tarball);
    const flowrules = onPath(prefix);
    const installed = join(prefix, "lib", "node_modules", "flowrules");

    expect((await flowrules(["--version"], dir)).trim()).toBe(VERSION);
    // the starter rules ship with the package; validate finds them as rules/ from the package folder
    expect(await flowrules(["validate"], installed)).toMatch(/valid in \d+ files?, \d+ rules?/);
    const names = (await flowrules(["__complete", "rules", "--", "plan", "--rule"], installed)).split("\n").filter(Boolean).sort();
    expect(names.length).toBeGreaterThan(2);
    expect(await bashRuleNames(prefix, installed)).toEqual(names);
  });

  it("npm install -g . links this clone's build as flowrules", { timeout: 60_000 }, async () => {
    const prefix = join(await tempDir("flowrules-link-"), "prefix");
    await installGlobally(prefix, ".");
    expect((await onPath(prefix)(["--version"], ROOT)).trim()).toBe(VERSION);
  });
});

/**
 * README.md, "Setup" and "A rules repository": every documented install, run. The packed tarball (one `npm pack` for
 * the file) installed globally into a temporary prefix runs `--version`, `validate` of its starter rules, a completion
 * Tab, and the bash completion it prints completes rule names through that same command; `npm install -g .` links
 * this clone's build; a rules repository with the tarball under vendor/ and README's package.json lines installs it
 * and runs `npx flowrules`. The dependencies come from npm's cache (`npm ci` filled it) and the registry only for what
 * the cache lacks. Needs `npm run build` first (npm test does); about 30 s.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { schemaRef } from "../../src/commands/init.js";
import { VERSION } from "../../src/model/version.js";
import { tempDir } from "../helpers/temp.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

/** `npm install -g` into `prefix`: the cache first (--prefer-offline), no audit, no funding notice. */
async function installGlobally(prefix: string, what: string): Promise<void> {
  await run(
    "npm",
    [
      "install",
      "--global",
      "--prefix",
      prefix,
      what,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
    ],
    {
      cwd: ROOT,
      timeout: 150_000,
    },
  );
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

/** One `npm pack` for the file, shared by its cases (the pack is the slow part). */
let pack: Promise<{ dir: string; tarball: string }> | undefined;
function packed(): Promise<{ dir: string; tarball: string }> {
  pack ??= (async () => {
    const dir = await tempDir("flowrules-install-");
    // --ignore-scripts: prepack would rebuild dist/ under the feet of the other test files (npm test built it)
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, "--silent"], {
      cwd: ROOT,
      timeout: 60_000,
    });
    return { dir, tarball: join(dir, stdout.trim().split("\n").pop() ?? "") };
  })();
  return pack;
}

/** The package.json of README.md, "A rules repository", as written there (its one JSON block). */
function readmeDependency(): { private: boolean; dependencies: { flowrules: string } } {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### A rules repository"));
  const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
  expect(block).toBeDefined();
  return JSON.parse(block ?? "{}") as { private: boolean; dependencies: { flowrules: string } };
}

describe("installed with npm (README.md, Setup)", () => {
  it("prepack builds dist/, so a packed tarball always holds the CLI", () => {
    expect(manifest.scripts.prepack).toBe("npm run build");
    expect(manifest.bin).toEqual({ flowrules: "dist/cli/index.js" });
  });

  it(
    "npm pack, then npm install -g of the tarball: flowrules on PATH, its version, validate, a Tab and bash completion",
    { timeout: 180_000 },
    async () => {
      const { dir, tarball } = await packed();
      const prefix = join(dir, "prefix");
      await installGlobally(prefix, tarball);
      const flowrules = onPath(prefix);
      const installed = join(prefix, "lib", "node_modules", "flowrules");

      expect((await flowrules(["--version"], dir)).trim()).toBe(VERSION);
      // the starter rules ship with the package; validate finds them as rules/ from the package folder
      expect(await flowrules(["validate"], installed)).toMatch(/valid in \d+ files?, \d+ rules?/);
      const names = (await flowrules(["__complete", "rules", "--", "plan", "--rule"], installed))
        .split("\n")
        .filter(Boolean)
        .sort();
      expect(names.length).toBeGreaterThan(2);
      expect(await bashRuleNames(prefix, installed)).toEqual(names);
    },
  );

  it(
    "a rules repository as README.md says: the tarball under vendor/, the package.json lines as written there, npm install, npx flowrules; the $schema init writes exists",
    { timeout: 180_000 },
    async () => {
      const { tarball } = await packed();
      const repo = await tempDir("flowrules-rules-repo-");
      const lines = readmeDependency();
      const spec = lines.dependencies.flowrules;
      // the README names the version it documents: the tarball npm pack writes today
      expect(spec).toBe(`file:vendor/flowrules-${VERSION}.tgz`);
      await mkdir(join(repo, "vendor"));
      await copyFile(tarball, join(repo, spec.slice("file:".length)));
      await writeFile(join(repo, "package.json"), JSON.stringify(lines, null, 2));
      await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: repo,
        timeout: 150_000,
      });
      // what every clone then runs
      await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: repo,
        timeout: 150_000,
      });
      const npx = async (args: string[]): Promise<string> =>
        (
          await run("npx", ["--no-install", "flowrules", ...args], {
            cwd: repo,
            env: { ...process.env, NO_COLOR: "1" },
          })
        ).stdout;
      expect((await npx(["--version"])).trim()).toBe(VERSION);
      await mkdir(join(repo, "rules"));
      const schema = schemaRef(join(repo, "rules"), "rules.schema.json", repo);
      expect(schema).toBe("../node_modules/flowrules/schemas/rules.schema.json");
      expect(existsSync(join(repo, "rules", schema))).toBe(true);
      await copyFile(join(ROOT, "rules", "expenses.yaml"), join(repo, "rules", "expenses.yaml"));
      expect(await npx(["validate", "rules/"])).toMatch(/valid in 1 file, \d+ rules?/);
    },
  );

  it("npm install -g . links this clone's build as flowrules", { timeout: 60_000 }, async () => {
    const prefix = join(await tempDir("flowrules-link-"), "prefix");
    await installGlobally(prefix, ".");
    expect((await onPath(prefix)(["--version"], ROOT)).trim()).toBe(VERSION);
  });
});

/**
 * What `npm pack` ships: the built library and CLI, the schemas, the starter rules and the docs; never the benchmark,
 * the demo or the scripts (they live in bench/ and scripts/, see README.md). Needs `npm run build` first (npm test does).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const Manifest = z.object({
  main: z.string(),
  types: z.string(),
  bin: z.record(z.string(), z.string()),
  exports: z.object({ ".": z.object({ types: z.string(), default: z.string() }) }),
});
const manifest = Manifest.parse(JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")));

const PackResult = z.array(z.object({ files: z.array(z.object({ path: z.string() })) })).length(1);

async function packedFiles(): Promise<string[]> {
  // --ignore-scripts: prepack would rebuild dist/ under the feet of the other test files
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  const parsed = PackResult.parse(JSON.parse(stdout));
  return parsed[0]!.files.map((f) => f.path);
}

const norm = (p: string): string => p.replace(/^\.\//, "");

describe("the npm package", () => {
  it("ships the library, the CLI, schemas, rules and docs, and no benchmark, demo or script code", async () => {
    const files = await packedFiles();
    const unwanted = files.filter(
      (f) =>
        /^dist\/(bench|demo|scripts)(\/|\.)/.test(f) ||
        /^(bench|scripts|test|src)\//.test(f) ||
        f.startsWith("dist-extra/"),
    );
    expect(unwanted).toEqual([]);
    for (const f of [norm(manifest.main), norm(manifest.types), ...Object.values(manifest.bin).map(norm)]) {
      expect(files).toContain(f);
    }
    expect(files).toContain("schemas/rules.schema.json");
    expect(files).toContain("docs/rules.md");
    expect(files).toContain("docs/cli.md");
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
  });

  it("main, types and exports name files the build produces", () => {
    for (const f of [manifest.main, manifest.types, manifest.exports["."].types, manifest.exports["."].default]) {
      expect(existsSync(`${ROOT}${norm(f)}`), `${f} missing: run npm run build`).toBe(true);
    }
    expect(norm(manifest.exports["."].default)).toBe(norm(manifest.main));
  });

  it("the package entry exposes the documented API, and it plans the starter rules against the sandbox", async () => {
    const lib = (await import(
      pathToFileURL(`${ROOT}${norm(manifest.main)}`).href
    )) as typeof import("../../src/index.js");
    for (const name of [
      "loadRules",
      "compileSources",
      "createClient",
      "runPlan",
      "planFromInstances",
      "writePlanFile",
      "loadPlanFile",
      "applyCommand",
      "startSandbox",
    ] as const) {
      expect(typeof lib[name], name).toBe("function");
    }
    expect(lib.VERSION).toBe(JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")).version);

    const loaded = await lib.loadRules([`${ROOT}rules`]);
    expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const ruleSet = loaded.ruleSet;
    if (!ruleSet) throw new Error("the starter rules did not load");
    const sandbox = await lib.startSandbox({ port: 0, instances: 200, seed: 1 });
    try {
      const client = lib.createClient({ baseUrl: sandbox.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
      const plan = await lib.runPlan({ client, ruleSet });
      expect(plan.errors).toEqual([]);
      expect(plan.changes.length).toBeGreaterThan(0);
    } finally {
      await sandbox.close();
    }
  });
});

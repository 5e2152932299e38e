/**
 * The environment at the edge (CONTRIBUTING.md, "Adding a flag"): every `FLOWRULES_…` variable's name is spelled in
 * one file of src, src/model/env-names.ts (what each setting's variable does is its entry in
 * src/model/settings-table.ts), and only src/cli reads `process.env`: the layers below are handed values.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ENV } from "../../src/model/env-names.js";

const SRC = join(import.meta.dirname, "..", "..", "src");
const FILES = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => ({ path: relative(SRC, join(SRC, f)).split("\\").join("/"), text: readFileSync(join(SRC, f), "utf8") }));

/**
 * Below src/cli, the one file that hands the whole environment on: git runs as a child with the user's environment
 * (PATH, HOME, its credentials helpers) plus two variables of its own; it reads no setting from it.
 */
const PASSES_ENV_TO_CHILD = new Set(["ci/git.ts"]);

describe("environment variables", () => {
  it("every FLOWRULES_ name is spelled in src/model/env-names.ts and in no other file of src", () => {
    const spelled = new Map<string, string[]>();
    for (const f of FILES) {
      for (const name of new Set(f.text.match(/FLOWRULES_[A-Z0-9_]+/g) ?? []))
        spelled.set(name, [...(spelled.get(name) ?? []), f.path]);
    }
    expect(spelled.size).toBeGreaterThan(0);
    for (const [name, files] of spelled) expect({ name, files }).toEqual({ name, files: ["model/env-names.ts"] });
    // and the table names every one of them
    expect([...spelled.keys()].sort()).toEqual(Object.values(ENV).sort());
  });

  it("only src/cli reads process.env", () => {
    const readers = FILES.filter((f) => !f.path.startsWith("cli/") && !PASSES_ENV_TO_CHILD.has(f.path))
      .filter((f) => /process\.env\b/.test(f.text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "")))
      .map((f) => f.path);
    expect(readers).toEqual([]);
  });
});

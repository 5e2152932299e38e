/**
 * The layers of CONTRIBUTING.md, enforced: each folder of src/ imports only from folders below it, no file imports
 * form a cycle, and the action kinds are named only in src/actions (and the sandbox, which plays the service).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ACTION_KINDS, MUTATING_KINDS } from "../../src/actions/index.js";

const SRC = join(import.meta.dirname, "..", "..", "src");

/** Top to bottom; a folder may import from folders of a lower rank only. */
const RANK: Record<string, number> = {
  "index.ts": 100,
  cli: 90,
  commands: 80,
  watch: 78,
  notify: 75,
  render: 70,
  "rule-tests": 60,
  engine: 50,
  apply: 45,
  // a git source of rules (--changed-since, --compare): beside rules, under every room that plans or renders
  ci: 41,
  rules: 40,
  actions: 30,
  plan: 20,
  log: 20,
  api: 10,
  sandbox: 10,
  state: 45,
  // the file system's machinery (the one lock, the atomic writer, capped reads, where the config file is found)
  fs: 2,
  // words for people: counts with their noun, "did you mean", durations, JSON that shows what a terminal would hide
  text: 1,
  model: 0,
};

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const files = walk(SRC).map((f) => relative(SRC, f));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.[^"']+)["']/g;
// modules loaded when a command runs (src/cli) obey the same layers
const DYNAMIC_IMPORT = /\bimport\(\s*["'](\.[^"']+)["']\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), "utf8");
  return [...text.matchAll(IMPORT), ...text.matchAll(DYNAMIC_IMPORT)].map((m) =>
    normalize(join(dirname(file), m[1] ?? "")).replace(/\.js$/, ".ts"),
  );
}

const graph = new Map(files.map((f) => [f, importsOf(f)]));
const top = (f: string): string => f.split("/")[0] ?? f;

describe("architecture", () => {
  it("every folder of src/ has a layer", () => {
    expect([...new Set(files.map(top))].filter((t) => RANK[t] === undefined)).toEqual([]);
  });

  it("imports run one way: each folder imports only from folders below it", () => {
    const upward: string[] = [];
    for (const [f, deps] of graph) {
      for (const d of deps) {
        const a = top(f);
        const b = top(d);
        if (a !== b && (RANK[b] ?? 1000) >= (RANK[a] ?? -1)) upward.push(`${f} → ${d}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("no file imports another that resolves to nothing", () => {
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${f} → ${d}`));
    expect(missing).toEqual([]);
  });

  it("no import cycle between files", () => {
    const cycles: string[] = [];
    const state = new Map<string, 1 | 2>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 1);
      stack.push(f);
      for (const d of graph.get(f) ?? []) {
        if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].join(" → "));
        else if (!state.has(d) && graph.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, 2);
    };
    for (const f of graph.keys()) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it("nothing outside src/cli imports from it", () => {
    const into = [...graph].flatMap(([f, deps]) =>
      top(f) === "cli" || f === "index.ts" ? [] : deps.filter((d) => top(d) === "cli").map((d) => `${f} → ${d}`),
    );
    expect(into).toEqual([]);
  });

  // ajv's validators compiled from the schema (`npm run schema`) hold the kinds' schema fragments, names and all
  const outside = files.filter((f) => !["actions", "sandbox"].includes(top(f)) && !f.endsWith(".generated.ts"));

  it("no kind is tested by its name outside src/actions and src/sandbox", () => {
    expect(ACTION_KINDS.length).toBeGreaterThan(3);
    for (const kind of ACTION_KINDS) {
      const q = `["'\`]${kind}["'\`]`;
      // `a.kind === "report"`, `"abort" !== c.kind`, `case "abort":`
      const tested = new RegExp(`kind\\s*[!=]==?\\s*${q}|${q}\\s*[!=]==?\\s*[\\w.?]*kind\\b|case\\s+${q}\\s*:`);
      const testing = outside.filter((f) => tested.test(readFileSync(join(SRC, f), "utf8")));
      expect(testing, kind).toEqual([]);
    }
  });

  it("each mutating kind is named in at most 2 files outside src/actions and src/sandbox", () => {
    // the names may be words too: "abort" is also an AbortSignal's event
    for (const kind of MUTATING_KINDS) {
      const literal = new RegExp(`["'\`]${kind}["'\`]`);
      const naming = outside.filter((f) => literal.test(readFileSync(join(SRC, f), "utf8")));
      expect(naming.length, `${kind} named in ${naming.join(", ")}`).toBeLessThanOrEqual(2);
    }
  });
});

/**
 * What `flowrules --version`, `--help` and a completion Tab load (docs/performance.md, "Start-up"): commander, the
 * verbs' flag declarations and a few plain modules — never a verb's run module (src/cli/verbs/<verb>/run.ts), the settings resolver,
 * zod, a renderer or the HTTP client; a Tab not even commander: the table of value flags the build wrote, the YAML
 * reader and the module that lists names. And `validate` loads ajv's precompiled validators, not its compiler.
 * Checked on the built CLI by listing the files each process loads (bench/src/startup.ts), never by timing:
 * `npm run bench:startup` times them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { relative, sep } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { loadedModules, TAB_ARGS } from "../../bench/src/startup.js";
import { buildProgram } from "../../src/cli/program.js";
import { VALUE_FLAGS_FILE } from "../../src/cli/tab.js";
import { valueFlagsText } from "../../src/cli/write-value-flags.js";
import { VERSION, VERSION_FLAGS } from "../../src/model/version.js";
import { CLI } from "../helpers/cli.js";

const env = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1" };

/** The packages a process loaded, and its own modules (dist/…, without the extension). */
function loaded(args: string[]): { packages: string[]; own: string[]; files: string[]; stdout: string } {
  const r = loadedModules([CLI, ...args], { cwd: process.cwd(), env });
  expect(r.status, `flowrules ${args.join(" ")}`).toBe(0);
  const rel = r.files.map((f) => relative(process.cwd(), f).split(sep).join("/"));
  const packages = [...new Set(rel.flatMap((f) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1] ?? []))].sort();
  const own = rel.filter((f) => f.startsWith("dist/")).map((f) => f.slice("dist/".length).replace(/\.js$/, ""));
  return { packages, own, files: rel, stdout: r.stdout };
}

/**
 * Modules outside src/cli that the verbs' declarations may load: plain names and constants. A new one belongs here
 * only when it is as light (no package but commander, no zod schema, no renderer).
 */
const DECLARATIONS = [
  "model/version",
  "model/errors",
  "model/defaults",
  "model/env-names",
  "model/settings-table",
  "render/format-names",
  "log/option",
  "log/types",
  "sandbox/quirks",
  "watch/settings",
];
/** All a Tab loads: the entry, the table's reader, the names it lists (src/commands/complete.ts) and their files. */
const TAB = [
  "cli/index",
  "cli/tab",
  "cli/unfinished",
  "model/env-names",
  "model/errors",
  "commands/complete",
  "rules/files",
  "model/guards",
  "fs/capped-read",
  "fs/config-file",
  "model/defaults",
];

function declarationsOnly(own: string[]): string[] {
  return own.filter((m) =>
    m.startsWith("cli/")
      ? /^cli\/verbs\/[^/]+\/run$/.test(m) || m === "cli/verbs/run-verb" || m === "cli/settings" || m === "cli/profiles"
      : !DECLARATIONS.includes(m),
  );
}

describe("start-up: what loads", () => {
  it("--version alone: the version, as commander prints it, without building the program", async () => {
    for (const flag of VERSION_FLAGS) {
      const r = loaded([flag]);
      expect(r.stdout).toBe(`${VERSION}\n`);
      expect(r.packages).toEqual([]);
      expect(r.own.sort()).toEqual([
        "cli/index",
        "cli/tab",
        "cli/unfinished",
        "model/env-names",
        "model/errors",
        "model/version",
      ]);
    }
    // what the program itself prints for the same flags (it still answers `--version` among other words)
    const printed: string[] = [];
    const program = buildProgram()
      .exitOverride()
      .configureOutput({ writeOut: (s) => void printed.push(s) });
    for (const flag of VERSION_FLAGS) await program.parseAsync(["node", "flowrules", flag]).catch(() => undefined);
    expect(printed).toEqual(VERSION_FLAGS.map(() => `${VERSION}\n`));
  });

  it("--version among other words: commander and the verbs' flags, nothing a verb runs", () => {
    const r = loaded(["--version", "--no-color"]);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(r.packages).toEqual(["commander"]);
    expect(declarationsOnly(r.own)).toEqual([]);
  });

  it("--help: the same, and it lists every verb", () => {
    const r = loaded(["--help"]);
    const verbs = buildProgram()
      .commands.map((c) => c.name())
      .filter((n) => !n.startsWith("__"));
    expect(verbs.length).toBeGreaterThan(10);
    for (const verb of verbs) expect(r.stdout).toMatch(new RegExp(`^  ${verb}\\b`, "m"));
    expect(r.packages).toEqual(["commander"]);
    expect(declarationsOnly(r.own)).toEqual([]);
  });

  it("a Tab (`flowrules plan --rule ⇥`): the value flags' table, the YAML reader and the rule names, not the program", () => {
    const r = loaded(TAB_ARGS);
    // the rules of rules/, one a line, as the completion scripts read them
    expect(r.stdout.split("\n").filter(Boolean).length).toBeGreaterThan(2);
    // the YAML parser as the one file the build bundled (scripts/vendor-yaml.mjs), not the package's 72
    expect(r.packages).toEqual([]);
    expect(r.own.sort()).toEqual([...TAB, "vendor/yaml"].sort());
  });

  it("the sources import YAML as #yaml (the bundle, once built), never the package itself", () => {
    const direct = readdirSync(new URL("../../src/", import.meta.url), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .filter((f) =>
        /from\s+["']yaml["']|import\(\s*["']yaml["']\s*\)/.test(
          readFileSync(new URL(`../../src/${f}`, import.meta.url), "utf8"),
        ),
      );
    expect(direct).toEqual([]);
  });

  it("the bundled YAML parser is the installed package's version, with every export of it", async () => {
    const bundle = readFileSync(new URL("../../dist/vendor/yaml.js", import.meta.url), "utf8");
    const installed = JSON.parse(
      readFileSync(new URL("../../node_modules/yaml/package.json", import.meta.url), "utf8"),
    ) as { version: string };
    expect(bundle.split("\n", 1)[0]).toContain(`yaml ${installed.version} `);
    const bundled: Record<string, unknown> = await import(new URL("../../dist/vendor/yaml.js", import.meta.url).href);
    const pkg: Record<string, unknown> = await import("yaml");
    expect(Object.keys(bundled).sort()).toEqual(
      Object.keys(pkg)
        .filter((k) => k !== "default")
        .sort(),
    );
  });

  it("the Tab's table is the program's value flags (the build writes it)", () => {
    expect(readFileSync(new URL(`../../dist/cli/${VALUE_FLAGS_FILE}`, import.meta.url), "utf8")).toBe(valueFlagsText());
  });

  it("without the table, __complete runs as a commander verb and prints the same names", async () => {
    const tab = loaded(TAB_ARGS).stdout;
    let out = "";
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    try {
      await buildProgram()
        .exitOverride()
        .parseAsync(["node", "flowrules", ...TAB_ARGS]);
    } finally {
      spy.mockRestore();
    }
    expect(out).toBe(tab);
  });

  it("validate: ajv's precompiled validators and its runtime helpers, not its compiler; no HTTP client", () => {
    const r = loaded(["validate", "rules/"]);
    expect(r.own).toContain("rules/validators.generated");
    expect(
      r.files.filter((f) => f.startsWith("node_modules/ajv/") && !f.startsWith("node_modules/ajv/dist/runtime/")),
    ).toEqual([]);
    expect(r.packages).not.toContain("undici");
    expect(r.own.filter((m) => m.startsWith("api/http") || m === "api/client")).toEqual([]);
    // with no catalog, no config file and current validators: not the catalog's reader, the settings resolver, the
    // profile file's reader or the rule-file schema (zod schemas all), nor the validators' compiler
    const deferred = [
      "rules/catalog",
      "rules/catalog-checks",
      "model/structure",
      "cli/settings",
      "cli/profiles",
      "model/config",
      "model/settings",
      "rules/schema",
      "rules/validators-now",
    ];
    expect(r.own.filter((m) => deferred.includes(m))).toEqual([]);
    // and so no zod at all: the step kinds read their request bodies by hand (src/api/step-body.ts)
    expect(r.packages).not.toContain("zod");
    expect(r.own).not.toContain("api/schemas");
    expect(r.packages).not.toContain("yaml");
  });
});

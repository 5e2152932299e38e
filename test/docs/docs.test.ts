/**
 * The reference pages stay true: docs/rules.md and docs/cli.md are regenerated in memory from the schemas and the
 * commander program and must equal the committed files; every relative link in README.md and docs/ must resolve.
 */
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENV } from "../../src/model/env-names.js";
import { generatedDocs } from "../../scripts/docs/generate.js";
import { environmentRows } from "../../scripts/docs/cli-reference.js";
import { ALL_SETTINGS, OTHER_VARIABLES } from "../../src/model/settings-table.js";
import { buildProgram } from "../../src/cli/program.js";

const ROOT_URL = new URL("../../", import.meta.url).href;
const ROOT = fileURLToPath(ROOT_URL);
const read = (file: string): string => readFileSync(`${ROOT}${file}`, "utf8");

describe("generated reference pages", () => {
  const docs = generatedDocs(ROOT_URL);

  it.each(docs.map((d) => [d.file, d.text] as const))("%s matches its sources", (file, text) => {
    const committed = existsSync(`${ROOT}${file}`) ? read(file) : "";
    expect(committed === text, `${file} is stale: run npm run docs`).toBe(true);
  });

  it("the CLI reference names every command and option, with its choices", () => {
    const cli = docs.find((d) => d.file === "docs/cli.md")!.text;
    const program = buildProgram();
    for (const c of program.commands.filter((x) => !x.name().startsWith("__"))) {
      expect(cli).toContain(`## flowrules ${c.name()}`);
      for (const o of c.options) {
        expect(cli, `${c.name()} ${o.flags}`).toContain(`\`${o.flags}\``);
        for (const choice of o.argChoices ?? []) expect(cli).toContain(`\`${choice}\``);
      }
    }
  });

  it("every environment variable the source reads is in the CLI reference, with its setting's flag and default", () => {
    const cli = docs.find((d) => d.file === "docs/cli.md")!.text;
    const env = cli.slice(cli.indexOf("## Environment"));
    // every FLOWRULES_ name lives in src/model/env-names.ts (test/architecture/env-names.test.ts); the test-only
    // hooks are documented beside what they tune, not in the reference: the watcher's floor in docs/watch.md, the
    // plan's spill threshold in docs/performance.md
    const testOnly = OTHER_VARIABLES.filter((v) => v.docs === null).map((v) => v.name);
    expect(testOnly).toEqual([ENV.watchMinIntervalMs, ENV.watchMaxBackoffMs, ENV.planSpillBytes]);
    const names = [...Object.values(ENV).filter((n) => !testOnly.includes(n)), "NO_COLOR"];
    expect(names.length).toBeGreaterThan(2);
    expect(environmentRows().map((r) => r.name)).toEqual([...names].sort());
    for (const n of names) expect(env).toContain(`| \`${n}\` |`);
    // each setting with a variable brings its row by itself, with its flag and default
    const withEnv = ALL_SETTINGS.filter((s) => s.env !== undefined);
    expect(withEnv.length).toBeGreaterThan(5);
    for (const s of withEnv) {
      const row = env.split("\n").find((l) => l.startsWith(`| \`${s.env}\` |`));
      expect(row, s.env).toBeDefined();
      if (s.flags) expect(row).toContain(`\`${s.flags.split(" ")[0]}\``);
      if (s.default !== undefined) expect(row).toContain(JSON.stringify(s.default));
    }
  });

  it("the rule file reference has a row for every key of the schema", () => {
    const rulesMd = docs.find((d) => d.file === "docs/rules.md")!.text;
    const keys = new Set<string>();
    const collect = (n: unknown): void => {
      if (Array.isArray(n)) n.forEach(collect);
      else if (n && typeof n === "object") {
        for (const [k, v] of Object.entries(n)) {
          if (k === "properties" && v && typeof v === "object") for (const key of Object.keys(v)) keys.add(key);
          collect(v);
        }
      }
    };
    collect(JSON.parse(read("schemas/rules.schema.json")));
    collect(JSON.parse(read("schemas/rules-test.schema.json")));
    expect(keys.size).toBeGreaterThan(30);
    const missing = [...keys].filter((k) => !rulesMd.includes(`| \`${k}\` |`));
    expect(missing).toEqual([]);
    // each shared definition is linked where it is used, as a working link (not escaped text)
    for (const def of Object.keys(JSON.parse(read("schemas/rules.schema.json")).$defs as Record<string, unknown>)) {
      expect(rulesMd, def).toContain(`[${def}](#rule-file-${def})`);
    }
  });
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6} (.*)$/.exec(line);
    if (h) {
      out.add(
        h[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, "")
          .replace(/ /g, "-"),
      );
    }
    for (const m of line.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  }
  return out;
}

describe("links in README.md and docs/", () => {
  const pages = ["README.md", ...readdirSync(`${ROOT}docs`).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

  it("every relative link points at a file that exists, and at a heading it has", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, "");
      const dir = page.includes("/") ? page.slice(0, page.lastIndexOf("/") + 1) : "";
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? page : new URL(path, `file:///${dir}`).pathname.slice(1);
        if (!existsSync(`${ROOT}${file}`)) {
          broken.push(`${page}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor && file.endsWith(".md") && !anchorsOf(read(file)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

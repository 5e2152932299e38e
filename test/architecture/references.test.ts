/**
 * Comments cite only what exists (CONTRIBUTING.md, "Comments"): every path under src/, docs/, test/, bench/ or
 * scripts/ named in a comment of src/ (or in a README beside the code) resolves, every bare `name.ts` names a file
 * of the repository, every section of docs/ a comment cites (`docs/x.md, "Heading"` or `docs/x.md#anchor`) is a
 * heading of that page, and no comment cites a document the repository does not hold, a numbered section, or an
 * issue of a tracker the repository does not hold.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** The comments of a TypeScript file; a README is all comment. */
function comments(file: string): string[] {
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".md")) return [text];
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]);
}

const SOURCES = walk(join(ROOT, "src")).filter((f) => f.endsWith(".ts") || f.endsWith(".md"));
const NAMES = new Set(
  ["src", "test", "bench", "scripts"].flatMap((d) => walk(join(ROOT, d)).map((f) => f.split("/").pop() ?? "")),
);

/** A comment as one line of text: the `*` and `//` that start its lines dropped, so a citation may wrap. */
function flat(comment: string): string {
  return comment.replace(/\n\s*(?:\*(?!\/)|\/\/)?/g, " ").replace(/\s+/g, " ");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

const plain = (text: string): string =>
  text.replace(/`/g, "").replace(/\s+/g, " ").trim().replace(/[.:]$/, "").toLowerCase();

const pages = new Map<string, { headings: string[]; labels: string[] }>();
/** A page's headings, and the labels a reader also finds a section by: a bold lead-in, a table row's first cell. */
function page(doc: string): { headings: string[]; labels: string[] } {
  let p = pages.get(doc);
  if (!p) {
    const text = readFileSync(join(ROOT, doc), "utf8").replace(/^```[\s\S]*?^```/gm, "");
    p = {
      headings: [...text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((m) => m[1] ?? ""),
      labels: [...text.matchAll(/\*\*([^*\n]+)\*\*|^\|\s*([^|\n]+?)\s*\|/gm)].map((m) => m[1] ?? m[2] ?? ""),
    };
    pages.set(doc, p);
  }
  return p;
}
const headings = (doc: string): string[] => page(doc).headings;

/** A cited section names one when it is a heading (or its start before a colon or parenthesis), or a label. */
function isHeading(doc: string, cited: string): boolean {
  const c = plain(cited);
  const { headings: hs, labels } = page(doc);
  return (
    hs.some((h) => {
      const p = plain(h);
      return p === c || p.startsWith(`${c}:`) || p.startsWith(`${c} (`);
    }) || labels.some((l) => plain(l) === c)
  );
}

/** The sections of docs/ a comment cites, and what is wrong with each. */
function sectionProblems(where: string, comment: string): string[] {
  const out: string[] = [];
  const text = flat(comment);
  for (const m of text.matchAll(
    /(?<![\w/.-])(docs\/[\w./-]*\.md)(#[\w-]+)?(\s*(?:[,;:]\s*|\(\s*)"([^"]+)")?(\s+(?:section|§)\s*\d+)?/g,
  )) {
    const doc = m[1] ?? "";
    if (!existsSync(join(ROOT, doc))) continue; // said once, by the path check
    const anchor = m[2]?.slice(1);
    if (anchor !== undefined && !headings(doc).some((h) => slug(h) === anchor))
      out.push(`${where}: ${doc}#${anchor} is no heading of ${doc}`);
    const cited = m[4];
    if (cited !== undefined && !isHeading(doc, cited)) out.push(`${where}: ${doc}, "${cited}" is no heading of ${doc}`);
    if (m[5] !== undefined)
      out.push(`${where}: ${doc}${m[5]} cites a numbered section (cite its heading: ${doc}, "Heading")`);
  }
  for (const m of text.matchAll(/(?<!docs\/)\b(?:design|DESIGN)\.md,?\s+(?:section|§)\s*\d+/g))
    out.push(`${where}: cites "${m[0]}"`);
  // the tracker's issues are not in the repository: say what the comment means instead of where it was decided
  for (const m of text.matchAll(/\bissues?\s+#?\d+|\bissue\s+#\w+/gi))
    out.push(`${where}: cites "${m[0]}" (say why in words, or cite docs/)`);
  return out;
}

function problems(): string[] {
  const out: string[] = [];
  for (const file of SOURCES) {
    const where = relative(ROOT, file);
    for (const c of comments(file)) {
      for (const m of c.matchAll(/(?<![\w/.-])((?:src|docs|test|bench|scripts)\/[\w./-]*\w)/g)) {
        const path = m[1] ?? "";
        if (!existsSync(join(ROOT, path))) out.push(`${where}: ${path} does not exist`);
      }
      for (const m of c.matchAll(/(?<![\w/.<-])([\w-]+\.ts)\b/g)) {
        const name = m[1] ?? "";
        if (!NAMES.has(name)) out.push(`${where}: ${name} is no file of the repository`);
      }
      // the design notes live in docs/design.md; DESIGN.md and its numbered sections are not in the repository
      for (const m of c.matchAll(/\bDESIGN\b[^\n]{0,20}/g))
        out.push(`${where}: cites "${m[0].trim()}" (write docs/design.md and a heading)`);
      out.push(...sectionProblems(where, c));
    }
  }
  return out;
}

describe("references in comments", () => {
  it("the section check knows a heading, an anchor, a numbered section and an issue number when it sees one", () => {
    const c = (text: string): string[] => sectionProblems("x.ts", `/** ${text} */`);
    expect(c('see (docs/operating.md, "Applying safely")')).toEqual([]);
    expect(c('see (docs/operating.md, "Profiles")')).toEqual([]);
    expect(c("see docs/operating.md#applying-safely")).toEqual([]);
    expect(c('see (docs/operating.md, "No such heading")')).toHaveLength(1);
    expect(c("see docs/operating.md#no-such-heading")).toHaveLength(1);
    expect(c("see docs/design.md section 12")).toHaveLength(1);
    expect(c("as decided (issue 28)")).toHaveLength(1);
    expect(c("as decided (Issue #28, point 3)")).toHaveLength(1);
    expect(c("the issues of a report")).toEqual([]);
    // a citation that wraps onto the next line of the comment is read whole
    expect(sectionProblems("x.ts", '/**\n * see docs/operating.md,\n * "No such heading"\n */')).toHaveLength(1);
  });

  it("resolve: every cited path and file exists, no document outside the repository is cited", () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    expect(problems()).toEqual([]);
  });
});

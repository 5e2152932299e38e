/**
 * Random edits of real documents (rule files, rule-test files): for property tests that compare two validators of
 * one schema. Purely random JSON rarely gets past a schema's first level; an edit of a real file reaches every level.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse } from "yaml";

const ROOT = join(import.meta.dirname, "..", "..");

/** The YAML documents under these folders (of the repository) whose names match, parsed; unparsable ones left out. */
export function yamlCorpus(dirs: string[], name: RegExp): unknown[] {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : name.test(e.name) ? [join(dir, e.name)] : [],
    );
  return dirs
    .flatMap((d) => files(join(ROOT, d)))
    .flatMap((f) => {
      try {
        return [parse(readFileSync(f, "utf8")) as unknown];
      } catch {
        return [];
      }
    });
}

type Edit =
  | { kind: "set"; value: unknown }
  | { kind: "delete" }
  | { kind: "add"; key: string; value: unknown }
  | { kind: "wrap" };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.constant({ kind: "delete" as const }),
  fc.record({
    kind: fc.constant("add" as const),
    key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("name", "when", "select", "actions", "step", "fields")),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
  fc.constant({ kind: "wrap" as const }),
);

/** A deep copy of `doc` with one to three edits, each at a node reached by walking down `path` (indices wrap). */
function apply(doc: unknown, edits: Array<{ path: number[]; edit: Edit }>): unknown {
  const root = { doc: structuredClone(doc) as unknown };
  for (const { path, edit: e } of edits) {
    let parent: Record<string, unknown> | unknown[] = root;
    let key: string | number = "doc";
    for (const step of path) {
      const node: unknown = (parent as Record<string | number, unknown>)[key];
      if (typeof node !== "object" || node === null) break;
      const keys: Array<string | number> = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
      if (keys.length === 0) break;
      parent = node as Record<string, unknown>;
      key = keys[step % keys.length] ?? 0;
    }
    const p = parent as Record<string | number, unknown>;
    if (e.kind === "set") p[key] = e.value;
    else if (e.kind === "wrap") p[key] = [p[key]];
    else if (e.kind === "delete") {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete p[key];
    } else {
      const node = p[key];
      if (typeof node === "object" && node !== null && !Array.isArray(node))
        (node as Record<string, unknown>)[e.key] = e.value;
    }
  }
  return root.doc;
}

/** A document of the corpus, unchanged or with random edits. */
export function editedDocument(corpus: unknown[]): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      fc.nat({ max: corpus.length - 1 }),
      fc.array(fc.record({ path: fc.array(fc.nat(), { maxLength: 7 }), edit }), { maxLength: 3 }),
    )
    .map(([i, edits]) => apply(corpus[i], edits));
}

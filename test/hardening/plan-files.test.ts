/**
 * Hostile plan files: truncated, edited, wrongly typed, re-signed with wrong types, deeply nested, not JSON at all.
 * Every one is refused with one clear line (a UserError) before any request, before the lock and before a journal
 * exists; the CLI prints it without a stack trace and exits 1.
 */
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/model/errors.js";
import { planDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { connection, makePlan, MIXED_RULES, runApply, tempDir } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";

const RUNS = Number(process.env.FLOWRULES_FC_RUNS ?? 120);

let sb: RunningSandbox;
let dir: string;
let original: string;
let valid: Record<string, unknown>;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 4 });
  dir = await tempDir();
  const { file } = await makePlan(sb, dir, MIXED_RULES);
  original = await readFile(file, "utf8");
  valid = JSON.parse(original) as Record<string, unknown>;
});
afterAll(async () => {
  await sb.close();
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;

/** Every path into the plan (objects and arrays, not the root). */
function paths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  const children: [string | number, unknown][] = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : typeof v === "object" && v !== null
      ? Object.entries(v)
      : [];
  for (const [k, x] of children) {
    out.push([...at, k]);
    paths(x, [...at, k], out);
  }
  return out;
}

function parentOf(root: unknown, path: Path): { parent: Record<string | number, unknown>; key: string | number } {
  let cur = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  return { parent: cur, key: path[path.length - 1] as string | number };
}

const clone = (): Record<string, unknown> => JSON.parse(original) as Record<string, unknown>;

let counter = 0;
/** Writes `text` as a plan file and applies it in-process: it must be refused before any request. */
async function expectRefused(text: string): Promise<string> {
  const file = join(dir, `hostile-${++counter}.json`);
  await writeFile(file, text);
  sb.clearRequests();
  const outcome = await runApply(sb, dir, { paths: [file] }).then(
    (code) => new Error(`applied with exit ${code}`),
    (e: unknown) => e,
  );
  expect(outcome, (outcome as Error).message).toBeInstanceOf(UserError);
  const message = (outcome as Error).message;
  expect(message).not.toMatch(/\n|Maximum call stack|\[object Object\]|undefined/);
  expect(message.length).toBeLessThan(1200);
  expect(sb.requests()).toEqual([]);
  expect(existsSync(`${file}.journal.jsonl`)).toBe(false);
  expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
  await rm(file);
  return message;
}

describe("hostile plan files", () => {
  it("truncated anywhere: refused as not JSON", async () => {
    const body = original.trimEnd();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: body.length - 1 }), async (cut) => {
        const msg = await expectRefused(body.slice(0, cut));
        expect(msg).toMatch(/is not valid JSON|not a plan|format_version/);
      }),
      { numRuns: RUNS },
    );
  });

  it("any edit of the content (replace, delete, add) without a new digest: refused", async () => {
    const all = paths(valid);
    await fc.assert(
      fc.asyncProperty(
        fc.nat(all.length - 1),
        fc.constantFrom("replace", "delete", "add"),
        fc.jsonValue({ maxDepth: 2 }),
        async (i, op, value) => {
          const plan = clone();
          const path = all[i] as Path;
          const { parent, key } = parentOf(plan, path);
          if (op === "replace") {
            fc.pre(JSON.stringify(parent[key]) !== JSON.stringify(value));
            parent[key] = value;
          } else if (op === "delete") {
            if (Array.isArray(parent)) parent.splice(Number(key), 1);
            else delete parent[key];
          } else {
            const target = parent[key];
            fc.pre(typeof target === "object" && target !== null);
            if (Array.isArray(target)) target.push(value as Json);
            else (target as Record<string, unknown>)["x-added"] = value;
          }
          const msg = await expectRefused(JSON.stringify(plan, null, 2));
          expect(msg).toMatch(/digest|not a valid plan|format_version|planning error|planned against/);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("wrong types where the contract fixes them, even with a recomputed digest: refused by the schema", async () => {
    const changes = (valid.changes as unknown[]).length;
    const typed: Path[] = [["format_version"], ["created_at"], ["base_url"], ["changes"], ["errors"], ["digest"]];
    for (let i = 0; i < changes; i++) {
      for (const k of ["id", "rule", "instance_id", "process_id", "kind", "request", "before", "after", "precondition"])
        typed.push(["changes", i, k]);
      for (const k of ["method", "path", "body"]) typed.push(["changes", i, "request", k]);
      typed.push(["changes", i, "precondition", "status"]);
    }
    const otherType = (v: unknown): fc.Arbitrary<Json> => {
      const all: Array<fc.Arbitrary<Json>> = [
        fc.constant(null),
        fc.boolean(),
        fc.integer({ min: -5, max: 1e6 }),
        fc.string({ maxLength: 5 }),
        fc.constant([]),
        fc.constant({ x: 1 }),
      ];
      const kind = (x: unknown): string => (x === null ? "null" : Array.isArray(x) ? "array" : typeof x);
      return fc.oneof(...all).filter((x) => kind(x) !== kind(v));
    };
    await fc.assert(
      fc.asyncProperty(
        fc.nat(typed.length - 1).chain((i) => {
          const path = typed[i] as Path;
          const { parent, key } = parentOf(valid, path);
          return fc.tuple(fc.constant(path), otherType(parent[key]));
        }),
        async ([path, value]) => {
          const plan = clone();
          const { parent, key } = parentOf(plan, path);
          parent[key] = value;
          if (path[0] !== "digest") plan.digest = planDigest(plan as unknown as Plan);
          const msg = await expectRefused(JSON.stringify(plan));
          expect(msg).toMatch(/not a valid plan at \$|format_version/);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("edited request bodies with a recomputed digest: a body that disagrees with kind, step or instance is refused", async () => {
    const steps = (valid.changes as Array<{ kind: string }>)
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => c.kind !== "abort");
    const aborts = (valid.changes as Array<{ kind: string }>)
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => c.kind === "abort");
    const edits: Array<(p: Record<string, unknown>) => void> = [
      (p) =>
        void ((
          (p.changes as Array<{ request: { body: { step_id: number } } }>)[steps[0]?.i ?? 0] as {
            request: { body: { step_id: number } };
          }
        ).request.body.step_id = 1),
      (p) =>
        void ((
          (p.changes as Array<{ request: { body: { mode?: string } } }>)[steps[0]?.i ?? 0] as {
            request: { body: { mode?: string } };
          }
        ).request.body.mode = "bogus"),
      (p) =>
        void ((
          (p.changes as Array<{ request: { path: string } }>)[steps[0]?.i ?? 0] as { request: { path: string } }
        ).request.path = "/instances/1/complete_step/"),
      (p) =>
        void ((
          (p.changes as Array<{ request: { body: unknown } }>)[aborts[0]?.i ?? 0] as { request: { body: unknown } }
        ).request.body = { ids: [1, 2, 3] }),
      (p) =>
        void ((
          (p.changes as Array<{ request: { path: string } }>)[aborts[0]?.i ?? 0] as { request: { path: string } }
        ).request.path = "/instances/bulk/abort/../../processes/"),
      (p) => void (((p.changes as Array<{ instance_id: number }>)[0] as { instance_id: number }).instance_id = 2 ** 60),
      (p) => void (p.changes as unknown[]).push((p.changes as unknown[])[0]),
    ];
    expect(steps.length).toBeGreaterThan(0);
    expect(aborts.length).toBeGreaterThan(0);
    for (const edit of edits) {
      const plan = clone();
      edit(plan);
      plan.digest = planDigest(plan as unknown as Plan);
      expect(await expectRefused(JSON.stringify(plan))).toMatch(/not a valid plan at \$\.changes/);
    }
  });

  it("not a plan at all: garbage bytes, other JSON values, a deeply nested or huge document", async () => {
    const deep = clone();
    const changes = deep.changes as Array<Record<string, unknown>>;
    (changes[0] as Record<string, unknown>).before = "DEEP";
    deep.digest = `sha256:${"0".repeat(64)}`;
    // built as text: JSON.stringify itself cannot nest 20,000 deep
    const deepText = JSON.stringify(deep).replace('"DEEP"', `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`);
    const texts = [
      "",
      "\u0000\u0001\u0002",
      "null",
      "[]",
      "42",
      '"plan"',
      "{}",
      `\ufeff${original}`,
      "<html><body>502 Bad Gateway</body></html>",
      JSON.stringify({ ...valid, format_version: 2 }),
      deepText,
      `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      JSON.stringify({ ...valid, changes: Array.from({ length: 20_000 }, () => (valid.changes as unknown[])[0]) }),
    ];
    for (const text of texts) await expectRefused(text);
  });

  it("a key written twice, or one too long, is named in one bounded line with its controls escaped (apply, show)", async () => {
    // a key that would erase lines, reorder text and ring the bell, 600 characters long, written twice
    const hostile = `\u001b[2K\u001b[1A${"x".repeat(600)}\u202e\n\u0007\u009b`;
    const twice = join(dir, "twice.json");
    await writeFile(
      twice,
      original.replace(/\}\s*$/, `, ${JSON.stringify(hostile)}: 1, ${JSON.stringify(hostile)}: 2 }`),
    );
    // and a key of 3 MB, once: never gathered whole
    const long = join(dir, "long-key.json");
    await writeFile(long, original.replace(/\}\s*$/, `, "${"k".repeat(3_000_000)}": 1 }`));
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" };
    sb.clearRequests();
    for (const verb of ["apply", "show"]) {
      const r = await runCli([verb, "twice.json"], env, { cwd: dir });
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /twice\.json is not a valid plan: the key "\\u001b\[2K\\u001b\[1Ax+…" \(612 characters\) appears twice$/,
      );
      expect(r.stderr.length).toBeLessThan(300);
      // no control, C1 or reordering character reaches the terminal
      expect(r.stderr.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
      const l = await runCli([verb, "long-key.json"], env, { cwd: dir });
      expect(l.code).toBe(1);
      expect(l.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/long-key\.json is not a valid plan: a key longer than 1024 bytes at byte \d+$/),
      ]);
    }
    expect(sb.requests()).toEqual([]);
  });

  it("the CLI prints the refusal as one line, without a stack trace, and exits 1", async () => {
    const file = join(dir, "cut.json");
    await writeFile(file, original.slice(0, original.length / 2));
    sb.clearRequests();
    const res = await runCli(
      ["apply", file],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" },
      { cwd: dir },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^flowrules: .*cut\.json is not valid JSON/);
    expect(res.stderr.trim().split("\n")).toHaveLength(1);
    expect(res.stderr).not.toMatch(/\s+at .+:\d+:\d+/);
    expect(sb.requests()).toEqual([]);
    expect(connection(sb).baseUrl).toBe(sb.baseUrl);
  });
});

/**
 * The plan file's one reader (src/plan/read.ts), streamed: it gives what a whole-file parse gives, crossing every
 * chunk boundary, in a file's own key order or any other, and refuses a bad file in one line.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CanonicalHasher, canonicalJson, planDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { checkPlannedChange } from "../../src/actions/index.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { SignedPlanSchema } from "../../src/plan/schema.js";
import { UserError } from "../../src/model/errors.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, tempDir } from "../apply/helpers.js";

let sb: RunningSandbox;
let dir: string;
let file: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 5 });
  dir = await tempDir();
  // the expense rules change instances and write a report (the reports' array is hashed apart)
  ({ file } = await makePlan(sb, dir, await readFile(new URL("../../rules/expenses.yaml", import.meta.url), "utf8")));
});
afterAll(async () => {
  await sb.close();
});

/** The reference: the file parsed whole and checked by the schema, without the reader. */
async function parsedWhole(f: string): Promise<ReturnType<typeof SignedPlanSchema.parse>> {
  return SignedPlanSchema.parse(JSON.parse(await readFile(f, "utf8")));
}

/** The same plan with its top-level keys in another order, one line: the digest is over canonical JSON, still valid. */
async function reordered(src: string, to: string, order: (keys: string[]) => string[]): Promise<void> {
  const raw = JSON.parse(await readFile(src, "utf8")) as Record<string, unknown>;
  await writeFile(to, JSON.stringify(Object.fromEntries(order(Object.keys(raw)).map((k) => [k, raw[k]]))));
}

/** An object with its keys in reverse order (other values as they are). */
function reversedKeys(x: unknown): unknown {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return x;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(x).reverse())
    Object.defineProperty(out, k, {
      value: (x as Record<string, unknown>)[k],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

describe("the plan reader", () => {
  it("hashes any JSON value as its canonical form (keys sorted at every level)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const v = JSON.parse(JSON.stringify(value)) as unknown;
        const h = new CanonicalHasher();
        h.value(v);
        expect(h.digest()).toBe(`sha256:${createHash("sha256").update(canonicalJson(v)).digest("hex")}`);
      }),
      { numRuns: 300 },
    );
    // values whose objects hold their keys in order already (the hasher writes them without a sorted copy), and the
    // same values with every object's keys in reverse, and nested in both
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const sorted = JSON.parse(canonicalJson(value)) as unknown;
        const reversed = JSON.parse(JSON.stringify(sorted, (_k, x: unknown) => reversedKeys(x))) as unknown;
        for (const v of [sorted, reversed, { b: sorted, a: [reversed, sorted] }, [{ a: reversed, b: sorted }]]) {
          const h = new CanonicalHasher();
          h.value(v);
          expect(h.digest()).toBe(`sha256:${createHash("sha256").update(canonicalJson(v)).digest("hex")}`);
        }
      }),
      { numRuns: 300 },
    );
    // keys JavaScript orders its own way (index-like, "__proto__"), and undefined, which JSON leaves out
    for (const v of [
      { "10": 1, "9": 2, a: { "2": 0, b: [1, { "1": true }] } },
      JSON.parse('{"__proto__": {"z": 1, "a": 2}, "b": null}') as unknown,
      { a: undefined, b: [undefined, 1] },
    ]) {
      const h = new CanonicalHasher();
      h.value(v);
      expect(h.digest()).toBe(`sha256:${createHash("sha256").update(canonicalJson(v)).digest("hex")}`);
    }
  });

  it("digests a plan as the hash of its canonical JSON", async () => {
    const raw = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    const { digest, ...rest } = raw;
    expect(typeof digest).toBe("string");
    expect(planDigest(raw as unknown as Plan)).toBe(
      `sha256:${createHash("sha256").update(canonicalJson(rest)).digest("hex")}`,
    );
    expect(planDigest(raw as unknown as Plan)).toBe(digest);
  });

  it("reads what a whole-file parse reads, in chunks of a few bytes too", async () => {
    const whole = await parsedWhole(file);
    expect(whole.changes.length).toBeGreaterThan(3);
    expect(whole.reports.length).toBeGreaterThan(0);
    for (const chunkBytes of [1 << 20, 7, 1]) {
      const read = await loadPlanFile(file, sb.baseUrl, checkPlannedChange, { chunkBytes });
      expect(read.digest, `chunk ${chunkBytes}`).toBe(whole.digest);
      expect(read.plan).toEqual(whole);
    }
  });

  it("reads a plan whose top-level keys come in any order (the changes hashed again when they must be)", async () => {
    const whole = await parsedWhole(file);
    const orders: Array<(keys: string[]) => string[]> = [
      (k) => [...k].reverse(),
      (k) => [...k].sort(),
      (k) => [...k.filter((x) => x !== "base_url"), "base_url"],
      (k) => ["reports", ...k.filter((x) => x !== "reports")],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...orders), fc.integer({ min: 1, max: 64 }), async (order, chunkBytes) => {
        const other = join(dir, "reordered.json");
        await reordered(file, other, order);
        const read = await loadPlanFile(other, sb.baseUrl, checkPlannedChange, { chunkBytes });
        expect(read.plan).toEqual(whole);
      }),
      { numRuns: 12 },
    );
  });

  it("keeps compact records for apply: what is sent and checked, not what is shown", async () => {
    const loaded = await loadPlanFile(file, sb.baseUrl, checkPlannedChange, { compact: true });
    const whole = await parsedWhole(file);
    expect(loaded.plan.changes.length).toBe(whole.changes.length);
    expect(loaded.plan.reports).toEqual([]);
    for (const [i, c] of loaded.plan.changes.entries()) {
      const w = whole.changes[i];
      expect(c.id).toBe(w?.id);
      expect(c.request).toEqual(w?.request);
      expect(c.precondition).toEqual(w?.precondition);
      expect(c.before).toEqual({});
    }
  });

  it("refuses a tampered or malformed file in one line naming it", async () => {
    const text = await readFile(file, "utf8");
    const refusal = async (name: string, content: string): Promise<string> => {
      const f = join(dir, name);
      await writeFile(f, content);
      const err = await loadPlanFile(f, sb.baseUrl, checkPlannedChange, { chunkBytes: 5 }).then(
        () => new Error("read"),
        (e: unknown) => e,
      );
      expect(err, name).toBeInstanceOf(UserError);
      const message = (err as Error).message;
      expect(message).toContain(name);
      expect(message).not.toContain("\n");
      return message;
    };
    expect(await refusal("tampered.json", text.replace(/"title": "[^"]*"/, `"title": "Edited"`))).toMatch(
      /does not match its digest/,
    );
    expect(await refusal("after.json", text.replace(/\}\s*$/, "} x"))).toMatch(
      /is not valid JSON \(text after the object/,
    );
    expect(await refusal("one.json", text.replace(/"changes": \[/, '"changes": [1, '))).toMatch(
      /not a valid plan at \$\.changes\[0\]/,
    );
    expect(await refusal("half.json", text.slice(0, Math.floor(text.length / 2)))).toMatch(/is not valid JSON/);
    expect(await refusal("twice.json", text.replace(/\}\s*$/, ', "format_version": 1 }'))).toMatch(
      /the key "format_version" appears twice/,
    );
    expect(await refusal("version.json", text.replace('"format_version": 1', '"format_version": 2'))).toMatch(
      /format_version 2/,
    );
    expect(await refusal("scalar.json", text.replace(/"changes": \[/, '"changes": 7, "x": ['))).toMatch(
      /not a valid plan at \$\.changes: expected an array/,
    );
    expect(await refusal("array.json", "[]")).toMatch(/is not a plan: expected a JSON object/);
    await expect(loadPlanFile(join(dir, "none.json"), sb.baseUrl)).rejects.toThrow(/no plan file .*none\.json/);
  });
});

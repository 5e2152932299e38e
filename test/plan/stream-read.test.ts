/** A plan read as a stream gives what the whole-file reader gives, crossing every chunk boundary, and refuses the same. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CanonicalHasher, canonicalJson, planDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { checkPlannedChange } from "../../src/actions/index.js";
import { checkPlan, loadPlanFile } from "../../src/plan/read.js";
import { streamPlanFile } from "../../src/plan/stream-read.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";

let sb: RunningSandbox;
let dir: string;
let file: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 5 });
  dir = await tempDir();
  ({ file } = await makePlan(sb, dir, MIXED_RULES));
});
afterAll(async () => {
  await sb.close();
});

const passes = (c: Parameters<typeof checkPlannedChange>[0]): boolean => {
  let good = true;
  checkPlannedChange(c, () => void (good = false));
  return good;
};

/** The same plan with its top-level keys in reverse order, one line: the digest is over canonical JSON, still valid. */
async function reordered(src: string, to: string): Promise<void> {
  const raw = JSON.parse(await readFile(src, "utf8")) as Record<string, unknown>;
  const back = Object.fromEntries(Object.entries(raw).reverse());
  await writeFile(to, JSON.stringify(back));
}

describe("streaming plan reader", () => {
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
    // keys JavaScript orders its own way (index-like, "__proto__"), and undefined, which JSON leaves out
    for (const v of [{ "10": 1, "9": 2, a: { "2": 0, b: [1, { "1": true }] } }, JSON.parse('{"__proto__": {"z": 1, "a": 2}, "b": null}') as unknown, { a: undefined, b: [undefined, 1] }]) {
      const h = new CanonicalHasher();
      h.value(v);
      expect(h.digest()).toBe(`sha256:${createHash("sha256").update(canonicalJson(v)).digest("hex")}`);
    }
  });

  it("digests a plan as the hash of its canonical JSON", async () => {
    const raw = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    const { digest, ...rest } = raw;
    expect(typeof digest).toBe("string");
    expect(planDigest(raw as unknown as Plan)).toBe(`sha256:${createHash("sha256").update(canonicalJson(rest)).digest("hex")}`);
    expect(planDigest(raw as unknown as Plan)).toBe(digest);
  });

  it("reads what the whole-file reader reads, in chunks of a few bytes too", async () => {
    const whole = checkPlan(JSON.parse(await readFile(file, "utf8")), file, sb.baseUrl, checkPlannedChange);
    expect(whole.plan.changes.length).toBeGreaterThan(10);
    for (const chunk of [1 << 20, 7, 1]) {
      const streamed = await streamPlanFile(file, passes, false, chunk);
      expect(streamed, `chunk ${chunk}`).toBeDefined();
      expect(streamed?.digest).toBe(whole.digest);
      expect(streamed?.plan).toEqual(whole.plan);
    }
    const other = join(dir, "reordered.json");
    await reordered(file, other);
    const streamed = await streamPlanFile(other, passes, false, 13);
    expect(streamed?.plan).toEqual(whole.plan);
  });

  it("keeps compact records for apply: what is sent and checked, not what is shown", async () => {
    const loaded = await loadPlanFile(file, sb.baseUrl, checkPlannedChange, { compact: true });
    const whole = checkPlan(JSON.parse(await readFile(file, "utf8")), file, sb.baseUrl, checkPlannedChange);
    expect(loaded.plan.changes.length).toBe(whole.plan.changes.length);
    for (const [i, c] of loaded.plan.changes.entries()) {
      const w = whole.plan.changes[i];
      expect(c.id).toBe(w?.id);
      expect(c.request).toEqual(w?.request);
      expect(c.precondition).toEqual(w?.precondition);
      expect(c.before).toEqual({});
    }
  });

  it("gives up on a tampered or malformed file, which the whole-file reader then refuses in its words", async () => {
    const text = await readFile(file, "utf8");
    const tampered = join(dir, "tampered.json");
    await writeFile(tampered, text.replaceAll("Approved by flowrules", "Approved by someone"));
    expect(await streamPlanFile(tampered, passes, true, 64)).toBeUndefined();
    await expect(loadPlanFile(tampered, sb.baseUrl, checkPlannedChange)).rejects.toThrow(/does not match its digest/);

    const cases = [
      text.replace(/\}\s*$/, "} x"), // text after the object
      text.replace(/"changes": \[/, '"changes": [1, '), // not a change
      text.slice(0, Math.floor(text.length / 2)), // truncated
    ];
    for (const [i, bad] of cases.entries()) {
      const f = join(dir, `bad-${i}.json`);
      await writeFile(f, bad);
      expect(await streamPlanFile(f, passes, true, 5), `case ${i}`).toBeUndefined();
      await expect(loadPlanFile(f, sb.baseUrl, checkPlannedChange), `case ${i}`).rejects.toThrow(/bad-\d\.json/);
    }
    // a key written twice: the stream leaves it to the whole-file reader, whose JSON.parse keeps the last one
    const dup = join(dir, "dup.json");
    await writeFile(dup, text.replace(/\}\s*$/, ', "format_version": 1 }'));
    expect(await streamPlanFile(dup, passes, true, 5)).toBeUndefined();
    expect((await loadPlanFile(dup, sb.baseUrl, checkPlannedChange)).plan.changes.length).toBeGreaterThan(0);
  });
});

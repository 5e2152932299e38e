/**
 * The reader's head of a line (src/state/heads.ts) answers as its `JSON.parse` path (`itemLine`, `valueLine`,
 * `recordHead` of src/state/schema.ts): over random list elements, field values and records written as flowrules
 * writes them (strings with every kind of character, `"skeleton"` keys inside a record and inside its values, ids up
 * to the largest safe integer, negative and fractional numbers, extra keys), a line that path takes is either left
 * to it (`OTHER`) or read with exactly its answer; lines as the writer writes them are taken; and a line changed
 * anywhere that still parses is never read otherwise than `JSON.parse` reads it. A line whose body that path would
 * refuse (a list element's status, say) may be taken by its head: a run checks the body when it uses the line and
 * asks the service for one that does not fit, and the MAC covers every byte (src/state/heads.ts).
 */
import { open } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ITEM, OTHER, RECORD, VALUE, headOf, newHead, type Head } from "../../src/state/heads.js";
import { stateKey } from "../../src/state/mac.js";
import { indexState } from "../../src/state/reader.js";
import { parsedOrNothing } from "../../src/state/run.js";
import {
  STATE_FILE,
  STATE_FORMAT,
  STATE_FORMAT_VERSION,
  itemLine,
  recordHead,
  valueLine,
} from "../../src/state/schema.js";
import { StateWriter } from "../../src/state/writer.js";
import { cleanUp, tempDir } from "../helpers/temp.js";

afterAll(cleanUp);

/** What the `JSON.parse` path keeps of a line, in the head's terms; undefined when it does not take the line. */
function slow(text: string): { kind: number; head: Partial<Head> } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null) return undefined;
  if ("item" in raw) {
    const i = itemLine(raw);
    return i && { kind: ITEM, head: { l: i.l, p: i.p, id: i.v.id } };
  }
  if ("value" in raw) {
    const v = valueLine(raw);
    return v && { kind: VALUE, head: { f0: v.f[0], f1: v.f[1], f2: v.f[2], id: v.id } };
  }
  if ("record" in raw) {
    const r = recordHead(raw);
    // a record written through is read by the JSON.parse path (its last_updated_time)
    return r && { kind: RECORD, head: { process_id: r.process_id, flags: r.flags, id: r.id, skeleton: r.skeleton } };
  }
  return undefined;
}

function fast(text: string): { kind: number; head: Partial<Head> } {
  const b = Buffer.from(text, "utf8");
  // the line inside a larger buffer, as the reader has it (a read chunk)
  const buf = Buffer.concat([Buffer.from('{"x":1}\n'), b, Buffer.from('\n{"y":2}')]);
  const h = newHead();
  const kind = headOf(buf, 8, 8 + b.length, h);
  const pick = (keys: Array<keyof Head>): Partial<Head> => Object.fromEntries(keys.map((k) => [k, h[k]]));
  if (kind === ITEM) return { kind, head: pick(["l", "p", "id"]) };
  if (kind === VALUE) return { kind, head: pick(["f0", "f1", "f2", "id"]) };
  if (kind === RECORD) return { kind, head: pick(["process_id", "flags", "id", "skeleton"]) };
  return { kind, head: {} };
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom('"', "\\", '},"skeleton":"x"', ',"skeleton":null', "\u0000\n\t", "—", "\ud800"),
);
/** mostly what the writer writes, now and then what it does not */
const mostly = <T, U>(good: fc.Arbitrary<T>, odd: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: odd, weight: 1 });
const id = mostly(
  fc.oneof(fc.integer({ min: 1, max: 2_000_000 }), fc.maxSafeNat()),
  fc.constantFrom(0, -1, 1.5, 2 ** 53),
);
const small = mostly(fc.nat({ max: 40 }), fc.constantFrom(-1, 0.5, 1e21));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(text, fc.constant("skeleton")), tie("value"), { maxKeys: 3 }),
  ),
})).value;
const extra = fc.dictionary(fc.constantFrom("extra", "skeleton", "id", "written"), json, { maxKeys: 2 });

const listItem = fc.record(
  {
    id,
    name: text,
    status: mostly(fc.constantFrom("running", "completed", "aborted"), fc.constant("paused")),
    public_url: fc.option(text, { nil: null }),
  },
  { requiredKeys: ["id", "name", "status"] },
);
const itemText = fc
  .tuple(small, small, mostly(listItem, json), fc.boolean())
  .map(([l, p, v, swap]) => JSON.stringify({ item: swap ? { p, l, v } : { l, p, v } }));

const fieldValue = fc.record(
  {
    instance_id: id,
    instance_name: fc.option(text, { nil: null }),
    value: fc.option(fc.dictionary(text, json, { maxKeys: 2 }), { nil: null }),
    settings: fc.option(fc.dictionary(text, json, { maxKeys: 2 }), { nil: null }),
  },
  { requiredKeys: ["instance_id"] },
);
const valueText = fc
  .tuple(fc.tuple(small, small, small), id, mostly(fc.option(fieldValue, { nil: null }), json))
  .map(([f, i, v]) => JSON.stringify({ value: { f, id: i, v } }));

const instance = fc.tuple(id, fc.option(text, { nil: undefined }), extra).map(([i, lut, more]) => ({
  id: i,
  name: "claim",
  ...(lut === undefined ? {} : { last_updated_time: lut }),
  ...more,
}));
const recordText = fc
  .tuple(
    mostly(fc.integer({ min: 1, max: 5000 }), fc.constantFrom(-3, 0)),
    mostly(fc.constantFrom("", "v", "t", "vt"), text),
    fc.boolean(),
    instance,
    fc.option(mostly(fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 32, maxLength: 32 }), text), {
      nil: null,
    }),
    fc.array(fc.tuple(fc.nat(9), fc.nat(9), json), { maxLength: 3 }),
  )
  .map(([process_id, flags, written, record, skeleton, values]) =>
    JSON.stringify({
      record: {
        process_id,
        flags,
        ...(written ? { written: true } : {}),
        compact: { record, skeleton, values, times: [] },
      },
    }),
  );

const anyLine = fc.oneof(itemText, valueText, recordText);

describe("the head of a state line (src/state/heads.ts)", () => {
  it("is OTHER or exactly what the JSON.parse path keeps, over random lines of each kind (many seeds)", () => {
    let taken = 0;
    fc.assert(
      fc.property(anyLine, (line) => {
        const f = fast(line);
        const s = slow(line);
        if (f.kind === OTHER || s === undefined) return;
        taken++;
        expect(s).toEqual(f);
      }),
      { numRuns: 3000, seed: 46 },
    );
    // not a check that passes by taking nothing
    expect(taken).toBeGreaterThan(500);
  });

  it("takes every line as the writer writes it", () => {
    const lines = [
      JSON.stringify({ item: { l: 3, p: 0, v: { id: 490868, name: 'Claim "A" — \\ é', status: "running" } } }),
      JSON.stringify({
        item: { l: 0, p: 12, v: { id: 1, name: "x", status: "aborted", public_url: "http://h/track/1" } },
      }),
      JSON.stringify({ value: { f: [1042, 20111, 50222], id: 100013, v: null } }),
      JSON.stringify({
        value: {
          f: [1042, 20111, 50222],
          id: 100013,
          v: { instance_id: 100013, instance_name: "n", value: { inputValue: 1.5 }, settings: { type: "number" } },
        },
      }),
      JSON.stringify({
        record: {
          process_id: 1042,
          flags: "v",
          compact: {
            record: { id: 7, name: "Claim", last_updated_time: "2026-01-01T00:00:00.000Z", tags: [{ a: {} }] },
            skeleton: "1a3d10b15b6582f29a77fa693a141296",
            values: [[0, 1, { skeleton: 1 }]],
            times: [[0, null]],
          },
        },
      }),
      JSON.stringify({
        record: { process_id: 1, flags: "", compact: { record: { id: 8 }, skeleton: null, values: [], times: [] } },
      }),
    ];
    for (const line of lines) {
      const f = fast(line);
      expect(f.kind, line).not.toBe(OTHER);
      expect(slow(line), line).toEqual(f);
    }
  });

  it("a line changed anywhere, which still parses, is read as JSON.parse reads it or left to it (many seeds)", () => {
    fc.assert(
      fc.property(anyLine, fc.nat(), fc.integer({ min: 32, max: 126 }), (line, at, byte) => {
        const b = Buffer.from(line, "utf8");
        b[at % b.length] = byte;
        const changed = b.toString("utf8");
        const f = fast(changed);
        if (f.kind === OTHER) return;
        const s = slow(changed);
        // the head is read where the JSON.parse path reads it; a change in the body past it is the MAC's to find
        if (s !== undefined) expect(s).toEqual(f);
      }),
      { numRuns: 3000, seed: 46 },
    );
  });
});

describe("a line taken by its head whose body does not fit", () => {
  it("opens (it verifies), and is refused where a run uses it: the run then asks the service", async () => {
    const dir = await tempDir();
    const key = stateKey("test-key");
    const writer = new StateWriter(
      dir,
      {
        format: STATE_FORMAT,
        format_version: STATE_FORMAT_VERSION,
        flowrules_version: "test",
        base_url: "http://127.0.0.1:1/api",
        key_digest: key.id,
        written_at: "2026-06-15T12:00:00.000Z",
        run_at: "2026-06-15T12:00:00.000Z",
        rules: {},
      },
      { describe: String, key },
    );
    const n = writer.nextListing();
    const good = { id: 7, name: "ok", status: "running" };
    writer.line(JSON.stringify({ item: { l: n, p: 0, v: good } }));
    writer.line(JSON.stringify({ item: { l: n, p: 0, v: { id: 8, name: "odd", status: "paused" } } }));
    writer.line(
      JSON.stringify({
        listing: {
          n,
          process_id: 1,
          query: {},
          run_at: "2026-06-15T12:00:00.000Z",
          complete: true,
          pages: [{ count: 2, size: 2 }],
        },
      }),
    );
    await writer.commit({});
    const fh = await open(join(dir, STATE_FILE), "r");
    try {
      const index = await indexState(fh, { dirArg: dir, key, elementIds: true });
      expect(index.authentic).toBe(true);
      const ref = [...index.listings.values()][0];
      expect(index.elementIds?.get(ref!)).toEqual([7, 8]);
      const texts = await index.lines(ref!.pages[0]!.lines);
      // what src/state/listings.ts does with each line: the second does not fit, so the listing is asked again
      expect(texts.map((t) => itemLine(parsedOrNothing(t))?.v)).toEqual([good, undefined]);
    } finally {
      await fh.close();
    }
  });
});

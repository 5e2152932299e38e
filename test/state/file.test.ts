/**
 * The state file on disk (src/state/writer.ts, reader.ts): what a run writes line by line is what the next run finds,
 * line for line, however the reads are grouped; a later line for the same question, record or value holds.
 */
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { indexState, StateIndex } from "../../src/state/reader.js";
import { STATE_FILE } from "../../src/state/schema.js";
import { StateWriter } from "../../src/state/writer.js";
import { HEADER, KEY, MARK, tempDir } from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const writerOptions = { describe: String, key: KEY };

/** names of any length, with characters of one to four UTF-8 bytes: byte ranges must not be counted in characters */
const name = fc.string({ unit: fc.constantFrom("a", "é", "—", "😀", " ", '"', "\\"), maxLength: 300 });

describe("state file", () => {
  it("reads back every line it wrote, however the lines it is asked for are grouped (many seeds)", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ id: fc.integer({ min: 1, max: 60 }), name, big: fc.boolean() }), {
          minLength: 1,
          maxLength: 120,
        }),
        fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 80 }),
        async (elements, valueIds) => {
          const writer = new StateWriter(dir.dir, HEADER, writerOptions);
          const n = writer.nextListing();
          // a long element now and then: lines far apart and longer than one read's gap
          const items = elements.map((e) => ({
            id: e.id,
            name: e.big ? e.name.repeat(400) : e.name,
            status: "running" as const,
          }));
          for (const item of items) writer.line(JSON.stringify({ item: { l: n, p: 0, v: item } }));
          writer.line(
            JSON.stringify({
              listing: {
                n,
                process_id: 7,
                query: { status: "running" },
                run_at: HEADER.run_at,
                complete: true,
                pages: [{ count: items.length, size: items.length }],
              },
            }),
          );
          const expected = new Map<number, unknown>();
          valueIds.forEach((id, k) => {
            const v =
              k % 3 === 0 ? null : { instance_id: id, instance_name: `${k}`, value: { inputValue: k }, settings: null };
            expected.set(id, v); // the later line holds
            writer.line(JSON.stringify({ value: { f: [7, 1, 2], id, v } }));
          });
          await writer.commit({ "7": MARK });
          const fh = await open(join(dir.dir, STATE_FILE), "r");
          try {
            const index = await indexState(fh, { dirArg: dir.dir, baseUrl: HEADER.base_url, key: KEY });
            expect(index.authentic).toBe(true);
            const listing = index.listings.get(`7:${JSON.stringify({ status: "running" })}`);
            const lines = listing?.pages[0]?.lines ?? [];
            expect((await index.lines(lines)).map((t) => JSON.parse(t).item.v)).toEqual(items);
            // in another order, with repeats
            const shuffled = [...lines.keys()]
              .reverse()
              .concat([...lines.keys()])
              .map((i) => lines[i] as number);
            expect((await index.lines(shuffled)).map((t) => JSON.parse(t).item.v)).toEqual(
              [...items].reverse().concat(items),
            );
            const field = index.fields.get("7:1:2") ?? new Map<number, number>();
            expect(new Set(field.keys())).toEqual(new Set(expected.keys()));
            for (const [id, line] of field)
              expect(JSON.parse((await index.lines([line]))[0] ?? "").value.v).toEqual(expected.get(id));
            expect(index.marks).toEqual({ "7": MARK });
          } finally {
            await fh.close();
          }
        },
      ),
      { numRuns: 60, seed: 24 },
    );
  });

  it("a run that does not commit leaves the previous file as it was, and no temporary file", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const first = new StateWriter(dir.dir, HEADER, writerOptions);
    await first.commit({});
    const before = await readFile(join(dir.dir, STATE_FILE), "utf8");
    const second = new StateWriter(dir.dir, { ...HEADER, run_at: "2026-06-15T13:00:00.000Z" }, writerOptions);
    second.line(JSON.stringify({ value: { f: [7, 1, 2], id: 1, v: null } }));
    await second.discard();
    expect(await readFile(join(dir.dir, STATE_FILE), "utf8")).toBe(before);
    const { readdir } = await import("node:fs/promises");
    expect(await readdir(dir.dir)).toEqual([STATE_FILE]);
  });

  it("StateIndex.lines groups nearby lines into one read and still gives each line alone", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    // short lines and long ones (longer than a span read ahead)
    const texts = Array.from(
      { length: 50 },
      (_, i) => `{"n":${i},"pad":"${"x".repeat(i % 3 === 0 ? (i * 7919) % 90_000 : (i * 131) % 900)}"}`,
    );
    const file = join(dir.dir, "lines.jsonl");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(file, texts.join("\n") + "\n");
    const fh = await open(file, "r");
    try {
      const index = new StateIndex(fh);
      let at = 0;
      const refs = texts.map((t) => {
        const len = Buffer.byteLength(t);
        const ref = index.place(at, at + len);
        index.block(at, at + len, Buffer.from(t));
        at += len + 1;
        return ref;
      });
      const pick = [7, 3, 49, 3, 0, 25, 26, 27];
      expect(await index.lines(pick.map((i) => refs[i] as number))).toEqual(pick.map((i) => texts[i]));
      // lines asked alone, many at once, in any order: each from a span read ahead or a read of its own
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 49 }), { minLength: 1, maxLength: 120 }), async (asks) => {
          const got = await Promise.all(asks.map((i) => index.lines([refs[i] as number])));
          expect(got).toEqual(asks.map((i) => [texts[i]]));
        }),
        { numRuns: 100, seed: 25 },
      );
    } finally {
      await fh.close();
    }
  });
});

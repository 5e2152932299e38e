/**
 * The state writer gathers lines as bytes in one reused buffer (src/state/writer.ts): whatever the lines' lengths
 * and characters (one to four UTF-8 bytes, lines that fill the buffer exactly, lines longer than it) and wherever
 * checkpoints fall, the file holds exactly the lines written, in order, and its MAC verifies (many seeds).
 */
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { indexState } from "../../src/state/reader.js";
import { STATE_FILE } from "../../src/state/schema.js";
import { BATCH_BYTES, StateWriter } from "../../src/state/writer.js";
import { HEADER, KEY, MARK, tempDir } from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A field value's line whose text is `text` (its length decides where the batch's bounds fall). */
function valueLine(id: number, text: string): string {
  return JSON.stringify({
    value: {
      f: [7, 1, 2],
      id,
      v: { instance_id: id, instance_name: null, value: { inputValue: text }, settings: null },
    },
  });
}

const THIRD = Math.floor(BATCH_BYTES / 3);
const unit = fc.constantFrom("a", "é", "—", "😀", '"', "\\", "\n");

describe("state writer's batch", () => {
  it("writes exactly the lines, in order, and a MAC that verifies, at any line length (many seeds)", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // mixed characters, or one of two to four bytes only (a line's bytes far above its length)
            text: fc.oneof(fc.string({ unit, minLength: 1, maxLength: 40 }), fc.constantFrom("é", "—", "😀")),
            // its length in UTF-16 units: short lines, lines near a third of the batch (where the byte bound
            // falls), lines beyond the batch
            length: fc.oneof(
              { arbitrary: fc.integer({ min: 0, max: 300 }), weight: 6 },
              { arbitrary: fc.integer({ min: 1_000, max: 40_000 }), weight: 2 },
              { arbitrary: fc.integer({ min: 100_000, max: 250_000 }), weight: 2 },
              { arbitrary: fc.integer({ min: THIRD - 300, max: THIRD + 300 }), weight: 2 },
              { arbitrary: fc.constant(BATCH_BYTES + 7), weight: 1 },
            ),
            checkpoint: fc.boolean(),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (lines) => {
          const writer = new StateWriter(dir.dir, HEADER, { describe: String, key: KEY });
          const written: string[] = [];
          const texts = new Map<number, string>();
          for (const [k, l] of lines.entries()) {
            const text = l.text.repeat(Math.ceil(l.length / l.text.length)).slice(0, l.length);
            texts.set(k, text);
            const line = valueLine(k, text);
            writer.line(line);
            written.push(line);
            if (l.checkpoint) await writer.checkpoint({ "7": { ...MARK, partial: true, synced: k, total: null } });
          }
          await writer.commit({ "7": MARK });
          const file = await readFile(join(dir.dir, STATE_FILE), "utf8");
          // the lines as written, in order, between the header and the last bookmarks (checkpoints between them)
          const ours = file.split("\n").filter((t) => t.startsWith('{"value":'));
          expect(ours).toEqual(written);
          const fh = await open(join(dir.dir, STATE_FILE), "r");
          try {
            const index = await indexState(fh, { dirArg: dir.dir, baseUrl: HEADER.base_url, key: KEY });
            expect(index.authentic).toBe(true);
            const field = index.fields.get("7:1:2") ?? new Map<number, number>();
            expect(field.size).toBe(lines.length);
            for (const [id, line] of field) {
              const [text = ""] = await index.lines([line]);
              expect(JSON.parse(text).value.v.value.inputValue).toBe(texts.get(id));
            }
          } finally {
            await fh.close();
          }
        },
      ),
      {
        numRuns: 12,
        seed: 46,
        // the batch two thirds full of one-byte characters, then a line of three-byte ones that fits by its
        // length and not by its bytes; then one of four-byte pairs
        examples: [
          [
            [
              { text: "a", length: 700_000, checkpoint: false },
              { text: "—", length: 200_000, checkpoint: false },
              { text: "a", length: 690_000, checkpoint: false },
              { text: "😀", length: 240_000, checkpoint: true },
              { text: "é", length: 3, checkpoint: false },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});

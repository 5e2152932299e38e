/**
 * The state reader is linear in its input and caps a line (src/state/reader.ts): a line that spans many read chunks
 * is joined once (joining at every chunk made a 100 MB line cost 24 s and a 300 MB one 204 s and 667 MB), and a line
 * longer than the cap is not read to its end: the file is not used, one warning, the run reads afresh.
 */
import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  indexState,
  lineBatchesOf,
  LineTooLong,
  linesOf,
  MAX_LINE_BYTES,
  type SplitStats,
} from "../../src/state/reader.js";
import { openStateDir } from "../../src/state/dir.js";
import { stateKey } from "../../src/state/mac.js";
import { STATE_FILE, STATE_FORMAT, STATE_FORMAT_VERSION, type StateHeader } from "../../src/state/schema.js";
import { StateWriter } from "../../src/state/writer.js";
import { cleanUp, tempDir } from "../helpers/temp.js";

afterAll(cleanUp);

const BASE = "http://127.0.0.1:1/api";
const KEY = stateKey("test-key");
const HEADER: StateHeader = {
  format: STATE_FORMAT,
  format_version: STATE_FORMAT_VERSION,
  flowrules_version: "test",
  base_url: BASE,
  key_digest: KEY.id,
  written_at: "2026-06-15T12:00:00.000Z",
  run_at: "2026-06-15T12:00:00.000Z",
  rules: {},
};

describe("state reader: long lines", () => {
  it("splits a 24 MB line (24 read chunks) copying each byte at most twice, and a file of many lines as written", async () => {
    const dir = await tempDir();
    const file = join(dir, "lines");
    const long = "x".repeat(24 * 1024 * 1024 + 17);
    await writeFile(file, `short\n${long}\n\nlast`);
    const fh = await open(file, "r");
    try {
      const stats: SplitStats = { copied: 0 };
      const got: Array<{ length: number; start: number; end: number; head: string }> = [];
      for await (const l of linesOf(fh, MAX_LINE_BYTES, stats))
        got.push({ length: l.bytes.length, start: l.start, end: l.end, head: l.bytes.subarray(0, 5).toString() });
      expect(got).toEqual([
        { length: 5, start: 0, end: 5, head: "short" },
        { length: long.length, start: 6, end: 6 + long.length, head: "xxxxx" },
        { length: 0, start: 7 + long.length, end: 7 + long.length, head: "" },
        { length: 4, start: 8 + long.length, end: 12 + long.length, head: "last" },
      ]);
      // joined once: the pieces are copied as they come and once more at the line's end (quadratic: ~300 MB here)
      expect(stats.copied).toBeLessThanOrEqual(2 * long.length + 8);
    } finally {
      await fh.close();
    }
  });

  it("refuses a line above the cap without reading it to its end", async () => {
    const dir = await tempDir();
    const file = join(dir, "lines");
    await writeFile(file, `{"a":1}\n${"y".repeat(5 * 1024 * 1024)}\n{"b":2}\n`);
    const fh = await open(file, "r");
    try {
      const stats: SplitStats = { copied: 0 };
      const seen: number[] = [];
      const read = (async () => {
        for await (const l of linesOf(fh, 1024 * 1024, stats)) seen.push(l.bytes.length);
      })();
      await expect(read).rejects.toThrow(LineTooLong);
      await expect(read).rejects.toThrow(
        /has a line longer than 1 MiB \(line 2; corrupt or not written by flowrules\)/,
      );
      expect(seen).toEqual([7]);
      // stopped at the cap, not at the line's end
      expect(stats.copied).toBeLessThanOrEqual(2 * 1024 * 1024);
    } finally {
      await fh.close();
    }
  });

  it("gives a chunk's lines in one batch, and the lines before an over-long one in its chunk before refusing it", async () => {
    const dir = await tempDir();
    const file = join(dir, "lines");
    const short = Array.from({ length: 1000 }, (_, i) => `{"n":${i}}`);
    await writeFile(file, `${short.join("\n")}\n${"z".repeat(100 * 1024)}\n{"after":1}\n`);
    const fh = await open(file, "r");
    try {
      const batches: string[][] = [];
      const read = (async () => {
        for await (const b of lineBatchesOf(fh, 64 * 1024)) batches.push(b.map((l) => l.bytes.toString()));
      })();
      await expect(read).rejects.toThrow(/has a line longer than 65536 bytes \(line 1001;/);
      // one read chunk: one batch, every line before the long one, in order
      expect(batches).toEqual([short]);
    } finally {
      await fh.close();
    }
  });

  it("a state file with an over-long line is not used: one warning line, the run reads everything afresh", async () => {
    const dir = await tempDir();
    const writer = new StateWriter(dir, HEADER, { describe: String, key: KEY });
    const n = writer.nextListing();
    writer.line(
      JSON.stringify({ item: { l: n, p: 0, v: { id: 1, name: "z".repeat(3 * 1024 * 1024), status: "running" } } }),
    );
    writer.line(
      JSON.stringify({
        listing: {
          n,
          process_id: 7,
          query: { status: "running" },
          run_at: HEADER.run_at,
          complete: true,
          pages: [{ count: 1, size: 1 }],
        },
      }),
    );
    await writer.commit({});
    // verified and whole under the default cap
    const fh = await open(join(dir, STATE_FILE), "r");
    try {
      const index = await indexState(fh, { dirArg: dir, baseUrl: BASE, key: KEY });
      expect(index.authentic).toBe(true);
      await expect(indexState(fh, { dirArg: dir, baseUrl: BASE, key: KEY, maxLine: 1024 * 1024 })).rejects.toThrow(
        LineTooLong,
      );
    } finally {
      await fh.close();
    }
    // a file whose line is longer than the default cap (a sparse file: no 72 MiB written)
    const big = await open(join(dir, STATE_FILE), "w");
    try {
      await big.write(`${JSON.stringify(HEADER)}\n{"item":{"l":0,"p":0,"v":"`);
      await big.truncate(MAX_LINE_BYTES + 4 * 1024 * 1024);
    } finally {
      await big.close();
    }
    const warnings: string[] = [];
    const opened = await openStateDir(dir, BASE, KEY);
    try {
      warnings.push(...opened.warnings);
      expect(opened.previous).toBeUndefined();
    } finally {
      await opened.release();
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^state: \S+ has a line longer than 72 MiB \(line 2; corrupt or not written by flowrules\): this run reads everything and rewrites it$/,
    );
  });
});

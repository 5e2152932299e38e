/** Small parts: durations, ISO dates, cursors, the PRNG. */
import { describe, expect, it } from "vitest";
import { CursorCodec } from "../../src/sandbox/cursor.js";
import { parseIsoDateTime } from "../../src/sandbox/dates.js";
import { parseDuration } from "../../src/sandbox/durations.js";
import { Prng } from "../../src/sandbox/prng.js";

const MIN = 60_000,
  HOUR = 60 * MIN,
  DAY = 24 * HOUR;

describe("durations", () => {
  const ok: [string, number][] = [
    ["00:50", 50 * MIN],
    ["01 09:30", DAY + 9 * HOUR + 30 * MIN],
    ["02:30:00", 2 * HOUR + 30 * MIN],
    ["02:30:15.5", 2 * HOUR + 30 * MIN + 15_500],
    ["3 days, 01:00:00", 3 * DAY + HOUR],
    ["PT50M", 50 * MIN],
    ["P1DT2H", DAY + 2 * HOUR],
    ["P2W", 14 * DAY],
    ["PT90S", 90_000],
    ["pt1.5h", 1.5 * HOUR],
  ];
  for (const [text, ms] of ok) it(`${text} = ${ms} ms`, () => expect(parseDuration(text)).toBe(ms));
  it("rejects other forms", () => {
    for (const bad of ["", "50", "P", "PT", "P1Y", "P1M", "1:2", "00:60", "abc", "-00:50"])
      expect(parseDuration(bad), bad).toBeNull();
  });
});

describe("ISO 8601 date-times", () => {
  it("accepts dates, date-times, fractions and offsets; no zone means UTC", () => {
    expect(parseIsoDateTime("2026-05-01")).toBe(Date.UTC(2026, 4, 1));
    expect(parseIsoDateTime("2026-05-01T10:20")).toBe(Date.UTC(2026, 4, 1, 10, 20));
    expect(parseIsoDateTime("2026-05-01 10:20:30.123Z")).toBe(Date.UTC(2026, 4, 1, 10, 20, 30, 123));
    expect(parseIsoDateTime("2026-05-01T12:00:00+02:00")).toBe(Date.UTC(2026, 4, 1, 10));
    expect(parseIsoDateTime("2026-05-01T12:00:00-0130")).toBe(Date.UTC(2026, 4, 1, 13, 30));
  });
  it("rejects impossible dates and other text", () => {
    for (const bad of ["2026-02-30", "2026-13-01", "2026-05-01T24:00", "yesterday", "-P30D", "now", "2026-5-1", ""]) {
      expect(parseIsoDateTime(bad), bad).toBeNull();
    }
  });
});

describe("cursors", () => {
  const codec = new CursorCodec(1);
  const payload = { v: 1 as const, p: 1042, o: "-name", t: 123, k: ["x", 5, null], r: false };
  it("round-trip, and are stable for the same seed", () => {
    const text = codec.encode(payload);
    expect(codec.decode(text)).toEqual(payload);
    expect(new CursorCodec(1).encode(payload)).toBe(text);
  });
  it("reject tampering, another seed's signature and garbage with a 400", () => {
    const text = codec.encode(payload);
    const other = new CursorCodec(2).encode(payload);
    for (const bad of [other, text.slice(0, -2), `x${text}`, "", "..", "a.b"]) {
      expect(() => codec.decode(bad)).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});

describe("prng", () => {
  it("is reproducible and stays in range", () => {
    const a = new Prng(42),
      b = new Prng(42),
      c = new Prng(43);
    const xs = Array.from({ length: 100 }, () => a.next());
    expect(Array.from({ length: 100 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 100 }, () => c.next())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const ints = Array.from({ length: 1000 }, () => a.int(1, 3));
    expect(new Set(ints)).toEqual(new Set([1, 2, 3]));
  });
});

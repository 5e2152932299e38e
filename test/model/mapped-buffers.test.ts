/**
 * Large typed arrays on mapped buffers (src/model/mapped-buffers.ts) and the growth rule of the compact tables
 * (src/model/number-column.ts): over many random seeds and sizes across the edges (below the size that gets a mapped
 * buffer, on one, past its end), a grown, trimmed or appended column holds exactly what a plain JS array holds; a
 * large array sits on a buffer of its own and grows over that buffer's memory without a copy.
 */
import { afterEach, describe, expect, it } from "vitest";
import { byteBuffer, capacity, column, setMappedSizes, widenedBytes } from "../../src/model/mapped-buffers.js";
import { grown, NumberColumn, trimmed } from "../../src/model/number-column.js";
import { Prng } from "../../src/sandbox/prng.js";
import { smallMappedSizes, withSmallMappedBuffers } from "../helpers/mapped-sizes.js";

afterEach(() => setMappedSizes());

const KINDS = [Float64Array, Uint32Array, Int32Array, Uint16Array, Uint8Array] as const;

describe("column, grown and trimmed across mapped-buffer edges", () => {
  const seeds = Array.from({ length: 40 }, (_, i) => i + 1);
  it.each(seeds)("seed %i: the same entries as a plain array", (seed) =>
    withSmallMappedBuffers(seed, () => {
      const { large, mapped } = smallMappedSizes(seed);
      const rnd = new Prng(seed);
      for (const Kind of KINDS) {
        const most = Kind === Uint8Array ? 255 : Kind === Uint16Array ? 65535 : 1_000_000;
        let a = column(Kind as unknown as new (n: number) => InstanceType<typeof Kind>, rnd.int(0, 40));
        const plain: number[] = [];
        const rounds = rnd.int(1, 1500);
        // what went wrong, if anything (one assertion at the end keeps the loop fast)
        const wrong: string[] = [];
        for (let k = 0; k < rounds; k++) {
          const before = a;
          a = grown(a, plain.length + 1, rnd.int(1, 64), rnd.pick([1.5, 2]));
          if (a.length <= plain.length) wrong.push(`${k}: too short`);
          // entries never written read as zero, whatever edge the array crossed
          if (a[plain.length] !== 0) wrong.push(`${k}: not zero`);
          if (a !== before && capacity(before) >= plain.length + 1 && a.buffer !== before.buffer)
            wrong.push(`${k}: copied though its buffer had room`);
          const v = rnd.int(0, most);
          a[plain.length] = v;
          plain.push(v);
          const bytes = a.length * Kind.BYTES_PER_ELEMENT;
          if (
            a.buffer.byteLength === mapped &&
            bytes < mapped &&
            capacity(a) !== Math.floor(mapped / Kind.BYTES_PER_ELEMENT)
          )
            wrong.push(`${k}: room`);
          if (rnd.chance(0.02)) {
            a = trimmed(a, plain.length);
            if (a.length !== plain.length) wrong.push(`${k}: trimmed to ${a.length}`);
          }
        }
        expect(wrong).toEqual([]);
        expect(Array.from(a.subarray(0, plain.length))).toEqual(plain);
        const t = trimmed(a, plain.length);
        expect(Array.from(t)).toEqual(plain);
        // a large array below the mapped size sits on a mapped buffer of its own
        const fresh = column(Kind as unknown as new (n: number) => InstanceType<typeof Kind>, plain.length);
        const freshBytes = plain.length * Kind.BYTES_PER_ELEMENT;
        expect(fresh.buffer.byteLength).toBe(freshBytes >= large && freshBytes < mapped ? mapped : freshBytes);
        expect(fresh.every((x) => x === 0)).toBe(true);
      }
    }),
  );

  it.each(seeds)("seed %i: a NumberColumn reads back what was pushed, cleared and trimmed", (seed) =>
    withSmallMappedBuffers(seed, () => {
      const rnd = new Prng(seed);
      const list = new NumberColumn(new Uint32Array(0), rnd.pick([1.5, 2]));
      const doubles = new NumberColumn(new Float64Array(1));
      let plain: number[] = [];
      let plainDoubles: number[] = [];
      for (let k = rnd.int(0, 3000); k > 0; k--) {
        const v = rnd.int(0, 2 ** 32 - 1);
        if (list.push(v) !== plain.length) throw new Error(`push ${k}: not at the end`);
        plain.push(v);
        // whole numbers that fit 32 bits (kept narrow) until one does not: -0, a fraction, a negative, past 2^32
        const d = rnd.chance(0.995)
          ? rnd.int(0, 2 ** 32 - 1)
          : rnd.pick([-0, 0.5, -3, 2 ** 32, 2 ** 53 - 1, Number.NaN, rnd.int(-1e9, 1e9) / 7]);
        doubles.push(d);
        plainDoubles.push(d);
        if (rnd.chance(0.001)) {
          list.clear();
          plain = [];
        }
        if (rnd.chance(0.002)) doubles.trim();
        if (rnd.chance(0.001)) {
          doubles.clear();
          plainDoubles = [];
        }
      }
      list.trim();
      expect(list.length).toBe(plain.length);
      expect(Array.from({ length: list.length }, (_, i) => list.at(i))).toEqual(plain);
      const back = Array.from({ length: doubles.length }, (_, i) => doubles.at(i));
      expect(back.every((x, i) => Object.is(x, plainDoubles[i]))).toBe(true);
      expect(back.length).toBe(plainDoubles.length);
    }),
  );
});

describe("mapped buffers at their real sizes", () => {
  it("gives a large array a 32 MB buffer, widens it in place and gives a plain one past it", () => {
    const small = column(Uint32Array, 1000);
    expect(small.buffer.byteLength).toBe(4000);
    let a = column(Uint32Array, 100_000);
    expect(a.buffer.byteLength).toBe(32 * 1024 * 1024);
    a[99_999] = 7;
    const buffer = a.buffer;
    a = grown(a, 100_001);
    expect(a.buffer).toBe(buffer);
    expect(a.length).toBe(200_000);
    expect(a[99_999]).toBe(7);
    a = grown(a, 8 * 1024 * 1024 + 1);
    expect(a.buffer).not.toBe(buffer);
    expect(a.buffer.byteLength).toBe(a.byteLength);
    expect(a[99_999]).toBe(7);
  });

  it("a list of doubles holds whole 32-bit numbers in 4 bytes each until one does not fit", () => {
    const offsets = new NumberColumn(new Float64Array(0));
    for (let i = 0; i < 1000; i++) offsets.push(i * 4_000_000);
    offsets.trim();
    expect(offsets.heldBytes).toBe(4000);
    offsets.push(2 ** 32);
    offsets.trim();
    expect(offsets.heldBytes).toBe(8 * 1001);
    expect(offsets.at(999)).toBe(999 * 4_000_000);
    expect(offsets.at(1000)).toBe(2 ** 32);
  });

  it("byte buffers: small ones plain, large ones widened over the same memory", () => {
    expect(byteBuffer(1000).buffer.byteLength).toBeLessThan(32 * 1024 * 1024);
    const b = byteBuffer(1024 * 1024);
    b.write("kept", 0);
    const wide = widenedBytes(b, 4 * 1024 * 1024);
    expect(wide?.buffer).toBe(b.buffer);
    expect(wide?.toString("utf8", 0, 4)).toBe("kept");
    expect(widenedBytes(b, 33 * 1024 * 1024)).toBeUndefined();
    expect(widenedBytes(Buffer.alloc(10), 20)).toBeUndefined();
  });
});

/**
 * A list of plain values (what a report row holds: numbers, texts, instants, null, booleans) in typed arrays, each
 * given back as it was put (docs/performance.md, "A million instances"). In a JS array a value costs its slot (8
 * bytes) plus its own object: a name of 40 characters with one non-Latin-1 letter is a two-byte string of ~100 bytes,
 * an instant ~40, a fraction a heap number of 16. Here a value is a kind (1 byte) and a 32-bit word (4 bytes): a whole
 * number that fits, a number's hundredths when they are a whole 32-bit number (an amount in cents), an instant's
 * whole seconds when the text is exactly that time's ISO form, or where a text's UTF-8 bytes sit in one byte store
 * (after their length); any other number or instant is a double in a side column. A text's part before its first
 * digit that many texts share ("Purchase request #" of "Purchase request #100017 — Dmitri Kowalski") is kept once, in
 * a small dictionary. A text that UTF-8 cannot carry exactly (a lone surrogate), an object or an array is kept as
 * itself. `at(i)` answers with a value `Object.is` to the one put, or (a text) equal to it
 * (test/model/value-column.test.ts).
 */
import { grown } from "./number-column.js";

/** whole numbers 0 to 2^32 - 1 (not -0): the word */
const WHOLE = 0;
/** the word's bytes: a varint length, then the text's UTF-8 bytes */
const TEXT = 1;
/** the word's bytes: a varint dictionary code, a varint length, then the rest of the text */
const PART_TEXT = 2;
/** an instant whose time is whole seconds from 1970 within 32 bits: the seconds */
const SECONDS = 3;
const NULL = 4;
const TRUE = 5;
const FALSE = 6;
const UNDEFINED = 7;
/** kept as itself: the word indexes `others` */
const OTHER = 8;
/** hundredths as a signed 32-bit word (checked exact both ways) */
const CENTS = 9;
/** any other number: the word indexes `doubles` */
const DOUBLE = 10;
/** any other instant: its time in `doubles` */
const INSTANT = 11;

/** the most shared parts a column keeps; later new ones stay in the texts */
const MAX_PARTS = 1024;
/** a part shorter than this is not worth a code, one longer is not a shared prefix */
const MIN_PART = 4;
const MAX_PART = 120;
/** offsets in the byte store are 32-bit words */
const MAX_OFFSET = 2 ** 32;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FIRST_DIGIT = /[0-9]/;

/** The time of a text that is exactly the ISO form `Date#toISOString` gives of it; undefined otherwise. */
function instantOf(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(10) !== 84 /* T */ || s.charCodeAt(23) !== 90 /* Z */) return undefined;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  return new Date(t).toISOString() === s ? t : undefined;
}

export class ValueColumn {
  private kinds = new Uint8Array(64);
  private words = new Uint32Array(64);
  private count = 0;
  private doubles = new Float64Array(0);
  private doubleCount = 0;
  private bytes = new Uint8Array(1024);
  private used = 0;
  private readonly others: unknown[] = [];
  private readonly parts: string[] = [];
  private readonly partCodes = new Map<string, number>();
  /** where the last varint read ended */
  private after = 0;

  get length(): number {
    return this.count;
  }

  /** Bytes held in typed arrays (the values kept as themselves not counted). */
  get heldBytes(): number {
    return this.kinds.byteLength + this.words.byteLength + this.doubles.byteLength + this.bytes.byteLength;
  }

  push(value: unknown): number {
    // 1.5 times as long when full (src/model/number-column.ts)
    this.kinds = grown(this.kinds, this.count + 1, 64, 1.5);
    this.words = grown(this.words, this.count + 1, 64, 1.5);
    const i = this.count++;
    this.kinds[i] = this.encode(value, i);
    return i;
  }

  at(i: number): unknown {
    if (i < 0 || i >= this.count) return undefined;
    const word = this.words[i] as number;
    switch (this.kinds[i]) {
      case WHOLE:
        return word;
      case CENTS:
        return (word | 0) / 100;
      case DOUBLE:
        return this.doubles[word];
      case TEXT: {
        const length = this.varint(word);
        return decoder.decode(this.bytes.subarray(this.after, this.after + length));
      }
      case PART_TEXT: {
        const code = this.varint(word);
        const length = this.varint(this.after);
        return `${this.parts[code] as string}${decoder.decode(this.bytes.subarray(this.after, this.after + length))}`;
      }
      case SECONDS:
        return new Date(word * 1000).toISOString();
      case INSTANT:
        return new Date(this.doubles[word] as number).toISOString();
      case NULL:
        return null;
      case TRUE:
        return true;
      case FALSE:
        return false;
      case UNDEFINED:
        return undefined;
      default:
        return this.others[word];
    }
  }

  /**
   * The bytes texts are held in, back to back (a view: valid until the next push): each text's UTF-8 bytes after its
   * shared part are contiguous; lengths and codes sit between them.
   */
  textBytes(): Uint8Array {
    return this.bytes.subarray(0, this.used);
  }

  /** The parts texts share (a text's part before its first digit, kept once): a text is its part, then its bytes. */
  sharedParts(): readonly string[] {
    return this.parts;
  }

  /** The values kept as themselves: objects, arrays and texts UTF-8 cannot carry. */
  keptValues(): readonly unknown[] {
    return this.others;
  }

  /** Whether some value is an instant held as its time (given back as its ISO text). */
  holdsInstants(): boolean {
    for (let i = 0; i < this.count; i++) if (this.kinds[i] === SECONDS || this.kinds[i] === INSTANT) return true;
    return false;
  }

  /** The kind of `value`, its word written at `i`. */
  private encode(value: unknown, i: number): number {
    switch (typeof value) {
      case "number": {
        if (value >>> 0 === value && !Object.is(value, -0)) return this.word(i, value, WHOLE);
        const k = Math.round(value * 100);
        // exact both ways, and not -0 (k / 100 is +0 for k = 0)
        if (k >= -2147483648 && k <= 2147483647 && k / 100 === value && !Object.is(value, -0))
          return this.word(i, k >>> 0, CENTS);
        return this.word(i, this.double(value), DOUBLE);
      }
      case "boolean":
        return value ? TRUE : FALSE;
      case "undefined":
        return UNDEFINED;
      case "string": {
        const t = instantOf(value);
        if (t !== undefined) {
          const seconds = t / 1000;
          if (seconds >>> 0 === seconds) return this.word(i, seconds, SECONDS);
          return this.word(i, this.double(t), INSTANT);
        }
        const kind = this.text(value, i);
        if (kind !== undefined) return kind;
        break;
      }
      default:
        if (value === null) return NULL;
    }
    this.others.push(value);
    return this.word(i, this.others.length - 1, OTHER);
  }

  private word(i: number, word: number, kind: number): number {
    this.words[i] = word;
    return kind;
  }

  private double(x: number): number {
    this.doubles = grown(this.doubles, this.doubleCount + 1, 16, 1.5);
    this.doubles[this.doubleCount] = x;
    return this.doubleCount++;
  }

  /** Writes a text's bytes (and its shared part's code) and its word; undefined when it is kept as itself. */
  private text(s: string, i: number): number | undefined {
    if (LONE_SURROGATE.test(s)) return undefined;
    const start = this.used;
    if (start >= MAX_OFFSET - 16 - s.length * 3) return undefined;
    const digit = s.search(FIRST_DIGIT);
    const code = digit >= MIN_PART && digit <= MAX_PART ? this.part(s.slice(0, digit)) : -1;
    const rest = code >= 0 ? s.slice(digit) : s;
    // two varints of at most 5 bytes each, and at most 3 bytes a UTF-16 unit
    this.bytes = grown(this.bytes, start + 10 + rest.length * 3, 1024, 1.5);
    let at = start;
    if (code >= 0) at = this.putVarint(at, code);
    const lengthAt = at;
    // the length is written once the bytes are: reserve its most likely size, move the bytes when it is longer
    const guess = rest.length * 3 < 128 ? 1 : rest.length * 3 < 16384 ? 2 : 3;
    const { written } = encoder.encodeInto(rest, this.bytes.subarray(lengthAt + guess));
    const needs = written < 128 ? 1 : written < 16384 ? 2 : written < 2097152 ? 3 : written < 268435456 ? 4 : 5;
    if (needs !== guess) this.bytes.copyWithin(lengthAt + needs, lengthAt + guess, lengthAt + guess + written);
    at = this.putVarint(lengthAt, written) + written;
    this.used = at;
    this.words[i] = start;
    return code >= 0 ? PART_TEXT : TEXT;
  }

  /** The dictionary code of a shared part, or -1 when the dictionary is full. */
  private part(text: string): number {
    let code = this.partCodes.get(text);
    if (code === undefined) {
      if (this.parts.length >= MAX_PARTS) return -1;
      code = this.parts.length;
      this.parts.push(text);
      this.partCodes.set(text, code);
    }
    return code;
  }

  private putVarint(at: number, n: number): number {
    while (n >= 128) {
      this.bytes[at++] = (n & 127) | 128;
      n = Math.floor(n / 128);
    }
    this.bytes[at++] = n;
    return at;
  }

  /** The varint at `at`; `after` is set to where it ends. */
  private varint(at: number): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.bytes[at++] as number;
      n += (b & 127) * scale;
      if (b < 128) break;
      scale *= 128;
    }
    this.after = at;
    return n;
  }
}

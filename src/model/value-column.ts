/**
 * A list of plain values (what a report row holds: numbers, texts, instants, null, booleans) in typed arrays, each
 * given back as it was put (docs/performance.md, "A million instances"). In a JS array a value costs its slot (8
 * bytes) plus its own object: a name of 40 characters with one non-Latin-1 letter is a two-byte string of ~100 bytes,
 * an instant ~40, a fraction a heap number of 16. Here a value is a kind (1 byte) and a number (8 bytes): the number
 * itself, an instant's time when the text is exactly that time's ISO form, or where a text's UTF-8 bytes sit in one
 * byte store. A text that UTF-8 cannot carry exactly (a lone surrogate), an object or an array is kept as itself.
 * `at(i)` answers with a value `Object.is` to the one put, or (a text) equal to it (test/model/value-column.test.ts).
 */
import { grown } from "./number-column.js";

const NUMBER = 0;
const TEXT = 1;
const INSTANT = 2;
const NULL = 3;
const TRUE = 4;
const FALSE = 5;
const UNDEFINED = 6;
const OTHER = 7;

/** A text's byte length fits below this in its packed number (offset * LEN + length stays an exact double). */
const LEN = 2 ** 22;
/** ...and its offset below this: 2^53 / 2^22. */
const MAX_OFFSET = 2 ** 31;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The time of a text that is exactly the ISO form `Date#toISOString` gives of it; undefined otherwise. */
function instantOf(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(10) !== 84 /* T */ || s.charCodeAt(23) !== 90 /* Z */) return undefined;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  return new Date(t).toISOString() === s ? t : undefined;
}

export class ValueColumn {
  private kinds = new Uint8Array(64);
  private nums = new Float64Array(64);
  private count = 0;
  private bytes = new Uint8Array(1024);
  private used = 0;
  private readonly others: unknown[] = [];

  get length(): number {
    return this.count;
  }

  /** Bytes held in typed arrays (the values kept as themselves not counted). */
  get heldBytes(): number {
    return this.kinds.byteLength + this.nums.byteLength + this.bytes.byteLength;
  }

  push(value: unknown): number {
    // 1.5 times as long when full (src/model/number-column.ts)
    this.kinds = grown(this.kinds, this.count + 1, 64, 1.5);
    this.nums = grown(this.nums, this.count + 1, 64, 1.5);
    const i = this.count++;
    const [kind, num] = this.encode(value);
    this.kinds[i] = kind;
    this.nums[i] = num;
    return i;
  }

  at(i: number): unknown {
    if (i < 0 || i >= this.count) return undefined;
    const num = this.nums[i] as number;
    switch (this.kinds[i]) {
      case NUMBER:
        return num;
      case TEXT: {
        const length = num % LEN;
        const start = (num - length) / LEN;
        return decoder.decode(this.bytes.subarray(start, start + length));
      }
      case INSTANT:
        return new Date(num).toISOString();
      case NULL:
        return null;
      case TRUE:
        return true;
      case FALSE:
        return false;
      case UNDEFINED:
        return undefined;
      default:
        return this.others[num];
    }
  }

  private encode(value: unknown): [number, number] {
    switch (typeof value) {
      case "number":
        return [NUMBER, value];
      case "boolean":
        return [value ? TRUE : FALSE, 0];
      case "undefined":
        return [UNDEFINED, 0];
      case "string": {
        const t = instantOf(value);
        if (t !== undefined) return [INSTANT, t];
        const at = this.text(value);
        if (at !== undefined) return [TEXT, at];
        break;
      }
      default:
        if (value === null) return [NULL, 0];
    }
    this.others.push(value);
    return [OTHER, this.others.length - 1];
  }

  /** The packed place of a text's bytes, or undefined when it is kept as itself. */
  private text(s: string): number | undefined {
    // at most 3 bytes a UTF-16 unit; a lone surrogate would come back as U+FFFD
    const most = s.length * 3;
    if (most >= LEN || LONE_SURROGATE.test(s)) return undefined;
    this.bytes = grown(this.bytes, this.used + most, 1024, 1.5);
    const start = this.used;
    if (start >= MAX_OFFSET) return undefined;
    const { written } = encoder.encodeInto(s, this.bytes.subarray(start));
    this.used += written;
    return start * LEN + written;
  }
}

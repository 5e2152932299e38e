/**
 * Whether a text holds a needle in any case of its ASCII letters — the match of replaceFolded (src/api/errors.ts),
 * which masks the API key in a plan's data — asked of texts held as UTF-8 bytes (a plan's changes as JSON, a
 * report's values) without making a string of each. A plan of 150,000 changes and 250,000 report rows is searched
 * in well under a second instead of being made, scanned and copied value by value; only a plan that may hold the key
 * is masked value by value (src/engine/mask-plan.ts).
 *
 * Bytes stand for the texts exactly: A-Z are folded to a-z as replaceFolded folds them (in UTF-8 a byte below 0x80 is
 * always that ASCII character), and a needle that holds no character JSON escapes (a quote, a backslash, a control
 * character) and no surrogate is the same bytes inside a JSON string as in the text itself. A needle that does
 * hold one cannot be searched in JSON (`inJson` is false): the caller looks value by value instead.
 */

const A = 0x41;
const Z = 0x5a;
const FOLD = 0x20;

/** Characters JSON.stringify writes escaped, and surrogates (a lone one is escaped, a pair is not). */
const ESCAPED_IN_JSON = /["\\\u0000-\u001f\ud800-\udfff]/;

function foldText(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

export class FoldedSearch {
  /** The needle folded (A-Z as a-z). */
  readonly folded: string;
  /** ...as UTF-8 bytes */
  readonly bytes: Uint8Array;
  /** Whether the needle's bytes inside a JSON string are its bytes as text (bytesHold may search JSON). */
  readonly inJson: boolean;

  constructor(needle: string) {
    if (needle.length === 0) throw new RangeError("an empty needle is in every text");
    this.folded = foldText(needle);
    this.bytes = Buffer.from(this.folded, "utf8");
    this.inJson = !ESCAPED_IN_JSON.test(needle);
  }

  /** Whether `text` holds the needle in any case of its ASCII letters (replaceFolded would change it). */
  textHolds(text: string): boolean {
    return text.length >= this.folded.length && foldText(text).includes(this.folded);
  }

  /** Whether `text` ends with the needle's first `n` characters, in any case of their ASCII letters. */
  endsWithStart(text: string, n: number): boolean {
    return n > 0 && text.length >= n && foldText(text.slice(-n)) === this.folded.slice(0, n);
  }

  /**
   * Whether bytes given piece by piece (in order, each piece read before the next is asked for) hold the needle's
   * bytes, A-Z folded; a match across two pieces counts.
   */
  bytesHold(pieces: Iterable<Uint8Array>): boolean {
    const n = this.bytes.length;
    // the last n - 1 bytes of what came before, folded, then the next piece folded: a match across pieces is found
    let scratch = Buffer.allocUnsafe(0);
    let carried = 0;
    for (const piece of pieces) {
      const need = carried + piece.length;
      if (scratch.length < need) {
        const next = Buffer.allocUnsafe(Math.max(need, 64 * 1024));
        scratch.copy(next, 0, 0, carried);
        scratch = next;
      }
      for (let i = 0; i < piece.length; i++) {
        const b = piece[i] as number;
        scratch[carried + i] = b >= A && b <= Z ? b + FOLD : b;
      }
      if (scratch.subarray(0, need).indexOf(this.bytes) >= 0) return true;
      const keep = Math.min(n - 1, need);
      scratch.copy(scratch, 0, need - keep, need);
      carried = keep;
    }
    return false;
  }
}

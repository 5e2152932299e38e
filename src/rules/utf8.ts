/**
 * Rule files are UTF-8. Read leniently, a Latin-1 or UTF-16 file would become text with U+FFFD in place of each
 * byte that is not UTF-8, and those replacement characters would be written to the service. Decoded
 * strictly instead: the first byte that is not UTF-8 is reported with its line and column.
 */
export type Utf8Result = { ok: true; text: string } | { ok: false; line: number; col: number; message: string };

// ignoreBOM keeps a byte order mark in the text, as a lenient read did (the YAML parser skips it)
const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function decodeUtf8(bytes: Uint8Array): Utf8Result {
  try {
    return { ok: true, text: STRICT.decode(bytes) };
  } catch {
    // find the first offending byte: the longest prefix that decodes, then count lines before it
    let lo = 0;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      // a prefix cut inside a valid sequence fails too; `stream` accepts an incomplete tail
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
        lo = mid;
      } catch {
        hi = mid - 1;
      }
    }
    const before = bytes.subarray(0, lo);
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < before.length; i++) {
      if (before[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    const col = [...new TextDecoder("utf-8").decode(bytes.subarray(lineStart, lo))].length + 1;
    const byte = (bytes[lo] ?? 0).toString(16).toUpperCase().padStart(2, "0");
    return { ok: false, line, col, message: `the file is not UTF-8 text (byte 0x${byte} at line ${line}, column ${col}): save it as UTF-8` };
  }
}

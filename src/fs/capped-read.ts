/**
 * Reads a small text file the user names (the config file, a rule file for completion) without trusting what the
 * path is: a FIFO, a device (`--config /dev/zero`) or a folder is refused without reading a byte, and a file that
 * holds more than the cap stops the read at the cap (docs/safety.md). Opened non-blocking, so a FIFO with no writer
 * does not hang the process; checked on the open descriptor, so the path cannot change between check and read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

/** The size every file flowrules reads as YAML may have at most: 1 MiB, as rule files (src/rules/parse.ts). */
export const MAX_YAML_FILE_BYTES = 1024 * 1024;

export type CappedRead = { ok: true; text: string } | { ok: false; problem: string };

/** What a path that is not a regular file is, in words: "a folder", "a FIFO", "a character device", … */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "something else";
}

function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "a folder";
  return code ?? "unreadable";
}

const MIB = (n: number): string => (n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MiB` : `${n} bytes`);

/** The file's text (UTF-8), or what is wrong with it in a few words ("a character device, not a regular file", "larger than 1 MiB, …"). */
export function readCappedText(path: string, maxBytes: number = MAX_YAML_FILE_BYTES): CappedRead {
  // judged before opening too: opening some devices acts (a tape rewinds), and a size over the cap is said unread
  let before: Stats;
  try {
    before = statSync(path);
  } catch (err) {
    return { ok: false, problem: reasonOf(err) };
  }
  if (!before.isFile()) return { ok: false, problem: `${kindOf(before)}, not a regular file` };
  if (before.size > maxBytes) return { ok: false, problem: `larger than ${MIB(maxBytes)}, the most it may hold` };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    return { ok: false, problem: reasonOf(err) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, problem: `${kindOf(st)}, not a regular file` };
    const tooLarge = { ok: false, problem: `larger than ${MIB(maxBytes)}, the most it may hold` } as const;
    if (st.size > maxBytes) return tooLarge;
    // the size said may be wrong (a file growing, /proc): read at most one byte past the cap, whatever it said
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > maxBytes) return tooLarge;
    }
    return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
  } catch (err) {
    return { ok: false, problem: reasonOf(err) };
  } finally {
    closeSync(fd);
  }
}

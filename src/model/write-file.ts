/**
 * Files flowrules writes for people and tools (catalogs, reports, JUnit results) are replaced whole or not at all:
 * written to a temporary file beside the target, flushed, then renamed over it. A failing run — a full disk, a file
 * size limit, a crash — leaves the previous file as it was, never a truncated one (issue 28, docs/safety.md).
 * The error names the file and the cause in words, never the temporary name.
 */
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError } from "./errors.js";

const CAUSES: Record<string, string> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is exhausted",
  EFBIG: "the file is larger than this process may write",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  ENOENT: "its folder does not exist",
  ENOTDIR: "a part of its path is not a folder",
  EISDIR: "it is a folder",
  EIO: "an input/output error",
};

/** "the disk is full (ENOSPC)" for a system error, its message otherwise. */
export function writeFailure(err: unknown): string {
  const code = typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
  if (code && CAUSES[code]) return `${CAUSES[code]} (${code})`;
  return code || (err instanceof Error ? err.message : String(err));
}

/** Replaces `file` with `data` atomically; on failure the old file stays and a UserError names `file`. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fh = await open(tmp, "wx", 0o666);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
}

/**
 * Files flowrules writes for people and tools (plan files, catalogs, reports, JUnit results) are replaced whole or not
 * at all: written to a temporary file beside the target, every write's byte count checked, flushed (fsync), then
 * renamed over it, and the folder flushed too. A failing run — a full disk, a file size limit, an I/O error, a crash —
 * leaves the previous file byte for byte, never a truncated one (docs/safety.md). The error names the file
 * and the cause in words, never the temporary name.
 *
 * What stands at the target decides what "replace" means (docs/safety.md, "Output files"):
 * - a regular file, or nothing: replaced as above;
 * - a symbolic link: the file it leads to is replaced (the link stays a link);
 * - `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: an open descriptor of this process, written
 *   into (a pipe from `>(…)` or a redirected stdout), never opened, truncated or replaced; `/dev/null` takes nothing;
 * - a folder, a device, a FIFO or a socket: refused in one line, and `checkOutputFile` says so before any request.
 */
import { randomBytes } from "node:crypto";
import { constants, fstatSync, writeSync, type Stats } from "node:fs";
import { access, lstat, open, readFile, readlink, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { UserError } from "../model/errors.js";

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
  ELOOP: "its symbolic links lead in a loop",
  EEXIST: "something already stands at a name it must create",
  ENAMETOOLONG: "its name is too long",
  EBADF: "no such open file descriptor",
  EOWNFD: "it is one of the runtime's own descriptors, not one this process was given",
  ERDONLY: "the descriptor is open for reading only",
  ESHORT: "the system wrote fewer bytes than asked, and then none",
};

/** causes found by this module, not system error codes: said in words only */
const OWN_CODES = new Set(["ESHORT", "EOWNFD", "ERDONLY"]);

function codeOf(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
}

/** "the disk is full (ENOSPC)" for a system error, its message otherwise. */
export function writeFailure(err: unknown): string {
  const code = codeOf(err);
  if (code && CAUSES[code]) return OWN_CODES.has(code) ? CAUSES[code] : `${CAUSES[code]} (${code})`;
  return code || (err instanceof Error ? err.message : String(err));
}

function fsError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/** What a file's type is, in words, for refusals: "a character device". */
function kindOf(s: Stats): string {
  if (s.isDirectory()) return "a folder";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isFIFO()) return "a named pipe (FIFO)";
  if (s.isSocket()) return "a socket";
  return "not a regular file";
}

/** Descriptors of this process named as paths: written into, never replaced. `-` is stdout. */
const FD_PATH = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/;

function descriptorOf(file: string): number | undefined {
  if (file === "-" || file === "/dev/stdout") return 1;
  if (file === "/dev/stderr") return 2;
  const m = FD_PATH.exec(file);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** `-`, `/dev/stdout`, `/dev/fd/1`: an output path that is this process's stdout, where the view goes too. */
export function namesStdout(file: string): boolean {
  return descriptorOf(file) === 1;
}

/** Where the bytes of an output file go. */
type Target =
  | { kind: "descriptor"; fd: number }
  | { kind: "discard" }
  /** `path`: the file to replace (a link's end), `existing`: what stands there now */
  | { kind: "file"; path: string; existing: Stats | undefined };

const MAX_LINKS = 40;

/**
 * The file a path leads to, following symbolic links one by one (a link may lead to a file that does not exist yet:
 * it is created there). Throws the system error (ELOOP for a loop) otherwise.
 */
async function endOfLinks(file: string): Promise<{ path: string; existing: Stats | undefined }> {
  let path = resolve(file);
  for (let i = 0; i < MAX_LINKS; i++) {
    let s: Stats;
    try {
      s = await lstat(path);
    } catch (err) {
      if (codeOf(err) === "ENOENT") return { path, existing: undefined };
      throw err;
    }
    if (!s.isSymbolicLink()) return { path, existing: s };
    const to = await readlink(path);
    path = isAbsolute(to) ? to : resolve(dirname(path), to);
  }
  throw fsError("ELOOP");
}

/** O_ACCMODE as Linux writes it in /proc/self/fdinfo (octal `flags:`). */
const ACCMODE = 0o3;

/**
 * A descriptor named as a path must be open, for writing, and not one of the runtime's own event objects (an
 * epoll or eventfd descriptor, which Linux names `anon_inode:…`): `--out /dev/fd/9` must not write into the event
 * loop's plumbing. On systems without /proc only "open" can be checked.
 */
async function checkDescriptor(fd: number): Promise<void> {
  try {
    fstatSync(fd);
  } catch {
    throw fsError("EBADF");
  }
  const link = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
  if (link?.startsWith("anon_inode:")) throw fsError("EOWNFD");
  const info = await readFile(`/proc/self/fdinfo/${fd}`, "utf8").catch(() => undefined);
  const flags = info === undefined ? undefined : /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
  if (flags !== undefined && (Number.parseInt(flags, 8) & ACCMODE) === 0) throw fsError("ERDONLY");
}

async function targetOf(file: string): Promise<Target> {
  const fd = descriptorOf(file);
  if (fd !== undefined) {
    await checkDescriptor(fd);
    return { kind: "descriptor", fd };
  }
  const end = await endOfLinks(file);
  if (end.path === "/dev/null") return { kind: "discard" };
  return { kind: "file", ...end };
}

/** The one-line refusal of a target flowrules must not replace, or undefined when it may write there. */
function refusal(file: string, t: Target): string | undefined {
  if (t.kind !== "file" || t.existing === undefined || t.existing.isFile()) return undefined;
  const shown = t.path === resolve(file) ? file : `${file} (a link to ${t.path})`;
  if (t.existing.isDirectory()) return `cannot write ${shown}: it is a folder; name a file in it`;
  return `cannot write ${shown}: it is ${kindOf(t.existing)}, not a regular file; flowrules replaces the files it writes, so it writes only to a regular file, a new file or an open descriptor (-, /dev/stdout, /dev/fd/N)`;
}

/**
 * Checks, before any request, that `file` can take an output: refuses a folder, a device, a FIFO or a socket (or a
 * link to one), a missing or unwritable folder (unless `createFolder`, when the command creates it), a link loop.
 */
export async function checkOutputFile(file: string, opts: { createFolder?: boolean } = {}): Promise<void> {
  let t: Target;
  try {
    t = await targetOf(file);
  } catch (err) {
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
  const refused = refusal(file, t);
  if (refused) throw new UserError(refused);
  if (t.kind !== "file") return;
  await checkFolderFor(file, dirname(t.path), opts.createFolder === true);
}

/** The folder a file will be created in: it exists (or can be made) and may be written. */
async function checkFolderFor(file: string, dir: string, create: boolean): Promise<void> {
  let existing = dir;
  for (;;) {
    try {
      const s = await stat(existing);
      if (!s.isDirectory()) throw new UserError(`cannot write ${file}: ${existing} is ${kindOf(s)}, not a folder`);
      break;
    } catch (err) {
      if (err instanceof UserError) throw err;
      if (codeOf(err) !== "ENOENT" || !create || dirname(existing) === existing)
        throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
      existing = dirname(existing);
    }
  }
  try {
    await access(existing, constants.W_OK);
  } catch (err) {
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
}

/**
 * Checks, before any request, that `dir` can take output files (`plan --report-dir`): a folder, or a path where one
 * can be made; refuses a file, a device or a link to one in one line.
 */
export async function checkOutputFolder(dir: string): Promise<void> {
  let s: Stats | undefined;
  try {
    s = await stat(dir);
  } catch (err) {
    if (codeOf(err) !== "ENOENT") throw new UserError(`cannot write into ${dir}: ${writeFailure(err)}`);
  }
  if (s && !s.isDirectory())
    throw new UserError(`cannot write into ${dir}: it is ${s.isFile() ? "a file" : kindOf(s)}, not a folder`);
  if (!s) await checkFolderFor(dir, dirname(resolve(dir)), true);
}

type Data = string | Uint8Array | Iterable<string | Uint8Array>;

function* buffersOf(data: Data): Generator<Uint8Array> {
  if (typeof data === "string") yield Buffer.from(data);
  else if (data instanceof Uint8Array) yield data;
  else for (const chunk of data) yield typeof chunk === "string" ? Buffer.from(chunk) : chunk;
}

/** Writes all of `buf`, checking each write's count: a write that takes nothing is an error, never a silent stop. */
async function writeAll(fh: FileHandle, buf: Uint8Array): Promise<void> {
  let at = 0;
  while (at < buf.length) {
    const { bytesWritten } = await fh.write(buf, at, buf.length - at);
    if (bytesWritten <= 0) throw fsError("ESHORT");
    at += bytesWritten;
  }
}

/** The same into a descriptor of this process (a pipe may be non-blocking: EAGAIN waits a moment). */
async function writeAllFd(fd: number, buf: Uint8Array): Promise<void> {
  let at = 0;
  while (at < buf.length) {
    let n: number;
    try {
      n = writeSync(fd, buf, at, buf.length - at);
    } catch (err) {
      if (codeOf(err) !== "EAGAIN") throw err;
      await new Promise((r) => setTimeout(r, 5));
      continue;
    }
    if (n <= 0) throw fsError("ESHORT");
    at += n;
  }
}

/** Created exclusively and never through a link: a link planted at the temporary name is refused, its target untouched. */
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

async function createTemp(target: string, mode: number): Promise<{ path: string; fh: FileHandle }> {
  for (let attempt = 0; ; attempt++) {
    const path = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      return { path, fh: await open(path, TEMP_FLAGS, mode) };
    } catch (err) {
      if (codeOf(err) !== "EEXIST" || attempt >= 4) throw err;
    }
  }
}

/** Flushes a folder's entries (the rename) to disk; file systems that cannot fsync a folder are let be. */
async function syncFolder(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY);
  try {
    await fh.sync();
  } catch (err) {
    if (!["EINVAL", "ENOTSUP", "EOPNOTSUPP", "EISDIR", "EBADF"].includes(codeOf(err))) throw err;
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `file` with `data` atomically and durably (see the top of this file); on failure the old file stays and a
 * UserError names `file`. `data` may be chunks (a plan of 100,000 changes is never one string).
 */
export async function writeFileAtomic(file: string, data: Data): Promise<void> {
  let target: Target;
  try {
    target = await targetOf(file);
  } catch (err) {
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
  const refused = refusal(file, target);
  if (refused) throw new UserError(refused);
  try {
    if (target.kind === "discard") return;
    if (target.kind === "descriptor") {
      for (const buf of buffersOf(data)) await writeAllFd(target.fd, buf);
      return;
    }
  } catch (err) {
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
  let temp: string | undefined;
  try {
    // a replaced file keeps its permissions; a new one gets the usual 0666 less the umask
    const created = await createTemp(target.path, 0o666);
    temp = created.path;
    const { fh } = created;
    let closed = false;
    try {
      if (target.existing) await fh.chmod(target.existing.mode & 0o7777);
      for (const buf of buffersOf(data)) await writeAll(fh, buf);
      await fh.sync();
      closed = true;
      await fh.close();
    } finally {
      if (!closed) await fh.close().catch(() => undefined);
    }
    await rename(temp, target.path);
    temp = undefined;
    await syncFolder(dirname(target.path));
  } catch (err) {
    // only a temporary file this call created is removed (one it could not create exclusively is not its own)
    if (temp !== undefined) await rm(temp, { force: true }).catch(() => undefined);
    throw new UserError(`cannot write ${file}: ${writeFailure(err)}`);
  }
}

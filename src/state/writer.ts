/**
 * The next state file, written as the run goes: each listing's elements, record and field value is written when the
 * run reads or uses it, so nothing is held to the end for the write (docs/performance.md, "Memory"). The file is a
 * temporary one beside the state file, created exclusively (never through a link someone planted there); only
 * `commit` (after a run that read all it needed) adds the MAC (mac.ts), syncs it and renames it over the state file,
 * so a failed or killed run, a full disk, a file-size limit or an I/O error leaves the previous state byte for byte.
 * Every write's byte count is checked (a short write is continued, a write that makes no progress is an error) and so
 * is every fsync: an error is never taken for success (docs/operating.md, "State between runs").
 */
import { closeSync, constants, fsyncSync, openSync, unlinkSync, writeSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../model/errors.js";
import { stateMac, type StateKey, type StateMac } from "./mac.js";
import { STATE_FILE, type Marks, type StateHeader } from "./schema.js";

/**
 * Lines are gathered as bytes into one buffer of this size, reused, before they are written: held as strings until
 * then, a batch cost ~2.8 MB of heap (thousands of small strings) and its joined copy (docs/performance.md, "A million
 * instances"). A line that may not fit in what is left is written after the batch; one longer than the buffer alone.
 */
export const BATCH_BYTES = 1 << 20;

/** Created, never opened through an existing name: O_EXCL refuses any file or link already there, O_NOFOLLOW too. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * The state was not written, and the previous one stands: the run itself succeeded (the state is a cache), so the
 * caller says so in one line and keeps the run's exit code. `told`: the reason was already said (when opening).
 */
export class StateNotWritten extends UserError {
  constructor(
    message: string,
    readonly told = false,
  ) {
    super(message);
  }
}

export interface WriterOptions {
  /** an error of the file system in words ("no space left on the device") */
  describe: (err: unknown) => string;
  key: StateKey;
  /** the state file as the user named it, for the message (default: its full path) */
  shown?: string;
  /** set: nothing is written, the state file is left as it is, and `commit` says this (a newer flowrules wrote it) */
  keep?: string;
}

function errCode(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
}

/** Writes all of `buf`, continuing after a short write; a write that makes no progress is an error. */
function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) {
    const n = writeSync(fd, buf, off, buf.length - off);
    if (n <= 0) throw Object.assign(new Error("the write made no progress"), { code: "EIO" });
    off += n;
  }
}

export class StateWriter {
  private readonly temp: string;
  private readonly target: string;
  private fd: number | undefined;
  /** the batch's bytes (allocated at the first line: a writer that writes nothing holds none) */
  private batch: Buffer | undefined;
  private size = 0;
  private count = 0;
  private listingNo = 0;
  private readonly mac: StateMac;
  /** a checkpoint put the file in place: it is the state file now, appended to (never removed by this writer) */
  private inPlace = false;
  /** a checkpoint of this run replaced the state file (it holds this run's answers) */
  get placed(): boolean {
    return this.inPlace;
  }
  /** the first write error: the run goes on (planning needs no state), the commit reports it */
  private failed: unknown;
  private done = false;
  /** the temporary file is ours to remove (created by this writer) */
  private created = false;

  constructor(
    private readonly dir: string,
    header: StateHeader,
    private readonly opts: WriterOptions,
  ) {
    this.target = join(dir, STATE_FILE);
    this.temp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
    this.mac = stateMac(opts.key);
    if (opts.keep !== undefined) {
      this.done = true;
      return;
    }
    try {
      this.fd = openSync(this.temp, CREATE_NEW, 0o644);
    } catch (err) {
      if (errCode(err) !== "EEXIST") this.failed = err;
      else {
        // the state dir is locked: a file of this name was left by a dead run with our pid, or planted. Removing the
        // name never touches what a link points to; then it is created anew, exclusively
        try {
          unlinkSync(this.temp);
          this.fd = openSync(this.temp, CREATE_NEW, 0o644);
        } catch (again) {
          this.failed = again;
        }
      }
    }
    this.created = this.fd !== undefined;
    this.line(JSON.stringify(header));
  }

  /** One line (JSON text without its newline). */
  line(text: string): void {
    if (this.done) return;
    this.count++;
    // at most 3 bytes a UTF-16 unit (a pair of surrogates makes 4 bytes of 2 units), and the newline
    const most = text.length * 3 + 1;
    if (most > BATCH_BYTES - this.size) {
      this.flush();
      if (most > BATCH_BYTES) {
        this.write(Buffer.from(`${text}\n`, "utf8"));
        return;
      }
    }
    this.batch ??= Buffer.allocUnsafe(BATCH_BYTES);
    this.size += this.batch.write(text, this.size, "utf8");
    this.batch[this.size++] = 0x0a;
  }

  /** A number for the next listing: its elements carry it, its head comes after them. */
  nextListing(): number {
    return this.listingNo++;
  }

  private flush(): void {
    if (this.batch === undefined || this.size === 0) return;
    const bytes = this.batch.subarray(0, this.size);
    this.size = 0;
    this.write(bytes);
  }

  /** Bytes into the MAC and the file, in order after everything before them. */
  private write(bytes: Buffer): void {
    if (this.fd === undefined || this.failed !== undefined) return;
    this.mac.update(bytes);
    try {
      writeAll(this.fd, bytes);
    } catch (err) {
      this.failed = err;
    }
  }

  /** Whether a checkpoint can be written (nothing failed, not committed or dropped). */
  get writable(): boolean {
    return !this.done && this.failed === undefined && this.fd !== undefined;
  }

  /**
   * A checkpoint while the run reads: the bookmarks so far and a line with the count and MAC of every byte before it,
   * synced. The first one renames the file over the state file (the previous state is replaced by what this run read
   * so far); later ones are appended to it. A file cut after a checkpoint (kill -9, a crash) is read up to it
   * (reader.ts), so it is as atomic as the rename. Throws StateNotWritten when it cannot be written (the run goes on).
   */
  async checkpoint(marks: Marks): Promise<void> {
    if (!this.writable) return;
    this.line(JSON.stringify({ marks }));
    this.flush();
    const text = `${JSON.stringify({ checkpoint: { lines: this.count, mac: this.mac.peek() } })}\n`;
    this.count++;
    const bytes = Buffer.from(text, "utf8");
    this.mac.update(bytes);
    try {
      if (this.failed !== undefined || this.fd === undefined) throw this.failed;
      writeAll(this.fd, bytes);
      fsyncSync(this.fd);
      if (!this.inPlace) {
        await rename(this.temp, this.target);
        this.inPlace = true;
        this.created = false;
        syncDir(this.dir);
      }
    } catch (err) {
      this.failed ??= err;
      throw new StateNotWritten(
        `cannot write a checkpoint of the state file ${this.opts.shown ?? this.target}: ${this.opts.describe(err)}`,
      );
    }
  }

  /**
   * Writes the bookmarks and the last line (the line count and the MAC of every byte before it), syncs, replaces the
   * state file and syncs its dir. Throws StateNotWritten (the previous state kept) when any of it fails.
   */
  async commit(marks: Marks): Promise<void> {
    if (this.opts.keep !== undefined) throw new StateNotWritten(this.opts.keep, true);
    if (this.done) return;
    this.line(JSON.stringify({ marks }));
    this.flush();
    const end = Buffer.from(`${JSON.stringify({ end: { lines: this.count, mac: this.mac.digest("hex") } })}\n`, "utf8");
    this.done = true;
    try {
      if (this.failed !== undefined || this.fd === undefined) throw this.failed;
      writeAll(this.fd, end);
      fsyncSync(this.fd);
      const fd = this.fd;
      this.fd = undefined;
      closeSync(fd);
      if (!this.inPlace) await rename(this.temp, this.target);
    } catch (err) {
      await this.discard();
      const kept = this.inPlace ? "its last checkpoint is kept" : "the previous state is kept";
      throw new StateNotWritten(
        `cannot write the state file ${this.opts.shown ?? this.target}: ${this.opts.describe(err)}; ${kept}`,
      );
    }
    this.created = false;
    syncDir(this.dir);
  }

  /** Drops the temporary file (idempotent): the state file stays as it was. */
  async discard(): Promise<void> {
    this.done = true;
    this.batch = undefined;
    this.size = 0;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = undefined;
    }
    if (this.created) await rm(this.temp, { force: true });
    this.created = false;
  }
}

/** Makes a rename in `dir` durable; where a dir cannot be synced (some file systems), the rename stands as it is. */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // not supported here: the file itself was synced before the rename
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Bytes appended and read back by position, held outside the V8 heap: in memory up to a threshold, then in a
 * temporary file. The file is unlinked the moment it is opened (it has no name while the run goes, so a kill, a crash
 * or an OOM leaves nothing behind: the system frees it with the last descriptor), and its descriptor is closed by
 * `close()` or, failing that, when the holder is collected. It is made in the system's temporary folder (TMPDIR),
 * never in the user's working folder. Pages of the file the system caches are not the process's memory (RSS).
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { byteBuffer, widenedBytes } from "../model/mapped-buffers.js";

/** Bytes held in memory before they go to a file (docs/performance.md, "A million instances"). */
export const DEFAULT_SPILL_BYTES = 8 * 1024 * 1024;
/** Bytes gathered in memory before one write to the file: one system call per ~1,500 changes. */
const WRITE_BUFFER = 1024 * 1024;
/** Bytes read from the file at once: most reads follow the order they were written in, so the next is already here. */
const READ_WINDOW = 128 * 1024;

let defaultThreshold = DEFAULT_SPILL_BYTES;

/**
 * The threshold of stores made without one, for the whole process (test-only: its variable in
 * src/model/env-names.ts, read by `plan`, so a child process's plan goes to a file at a size a test can reach).
 */
export function setDefaultSpillBytes(bytes: number): void {
  if (Number.isSafeInteger(bytes) && bytes >= 0) defaultThreshold = bytes;
}

export interface SpillOptions {
  /** bytes kept in memory before a file is used (0: a file from the first byte) */
  threshold?: number;
  /** where the file is made (default: the system's temporary folder) */
  dir?: string;
}

/** A file of the store: its descriptor, and its path while it still has a name (a system that refused the unlink). */
interface Held {
  fd: number;
  path?: string;
}

// a descriptor still open when its holder is collected (a plan no one closed) is closed then
const descriptors = new FinalizationRegistry<Held>((held) => closeQuietly(held));
/** files that kept their name, removed at the latest when the process exits */
const named = new Set<Held>();

function closeQuietly(held: Held): void {
  if (held.fd >= 0) {
    try {
      closeSync(held.fd);
    } catch {
      // already closed: nothing held
    }
    held.fd = -1;
  }
  if (held.path !== undefined) {
    try {
      unlinkSync(held.path);
    } catch {
      // gone already
    }
    named.delete(held);
    delete held.path;
  }
}

/**
 * Opens a new file no other process can know the name of, and removes its name at once. Where the system refuses to
 * remove the name of an open file, it is removed when the store is closed or the process exits.
 */
function openUnnamed(dir: string, held: Held): void {
  const path = join(dir, `flowrules-plan-${process.pid}-${randomBytes(8).toString("hex")}.tmp`);
  held.fd = openSync(path, "wx+", 0o600);
  try {
    unlinkSync(path);
  } catch {
    held.path = path;
    if (named.size === 0) process.once("exit", () => [...named].forEach(closeQuietly));
    named.add(held);
  }
}

export class SpillBytes {
  private threshold: number;
  private readonly dir: string;
  /** in memory: the bytes from `memStart` on (all of them until the file is opened) */
  private mem: Buffer = Buffer.alloc(0);
  private memUsed = 0;
  /** bytes already in the file; the bytes in `mem` follow them */
  private flushed = 0;
  private readonly held: Held = { fd: -1 };
  private window: Buffer | undefined;
  private windowStart = 0;
  private windowEnd = 0;

  constructor(opts: SpillOptions = {}) {
    this.threshold = Math.max(0, opts.threshold ?? defaultThreshold);
    this.dir = opts.dir ?? tmpdir();
  }

  /** Bytes appended so far. */
  get size(): number {
    return this.flushed + this.memUsed;
  }

  /** Whether the bytes went to a file. */
  get spilled(): boolean {
    return this.held.fd >= 0;
  }

  /** Appends `text` as UTF-8; returns where it starts and how many bytes it took. */
  appendText(text: string): { at: number; bytes: number } {
    const bytes = Buffer.byteLength(text);
    const at = this.size;
    this.reserve(bytes);
    this.mem.write(text, this.memUsed, "utf8");
    this.memUsed += bytes;
    if (this.spilled && this.memUsed >= WRITE_BUFFER) this.flush();
    else if (!this.spilled && this.size > this.threshold) this.spill();
    return { at, bytes };
  }

  /** The UTF-8 text of `bytes` bytes from `at`. */
  text(at: number, bytes: number): string {
    if (at >= this.flushed) {
      const from = at - this.flushed;
      return this.mem.toString("utf8", from, from + bytes);
    }
    if (at < this.windowStart || at + bytes > this.windowEnd || !this.window) this.readWindow(at, bytes);
    const from = at - this.windowStart;
    return (this.window as Buffer).toString("utf8", from, from + bytes);
  }

  /** Every byte appended so far, in order, a piece at a time (a piece holds until the next is asked for). */
  *pieces(): Generator<Uint8Array> {
    for (let at = 0; at < this.flushed; at = this.windowEnd) {
      this.readWindow(at, Math.min(READ_WINDOW, this.flushed - at));
      yield (this.window as Buffer).subarray(0, this.windowEnd - at);
    }
    yield this.mem.subarray(0, this.memUsed);
  }

  /** Lets go of the bytes and closes the file; reading afterwards is an error. */
  close(): void {
    closeQuietly(this.held);
    descriptors.unregister(this);
    this.mem = Buffer.alloc(0);
    this.memUsed = 0;
    this.window = undefined;
    this.windowStart = this.windowEnd = 0;
  }

  private reserve(bytes: number): void {
    if (this.memUsed + bytes <= this.mem.length) return;
    // outside the heap (not pooled): doubled while the bytes stay in memory, the write buffer's size once a file is in
    // use; one very large piece gets a buffer of its own size. A large one is on a mapped buffer, widened over the
    // same memory as it grows and given back whole when it goes (src/model/mapped-buffers.ts)
    const want = this.spilled
      ? Math.max(this.memUsed + bytes, WRITE_BUFFER)
      : Math.max(this.memUsed + bytes, this.mem.length * 2, 64 * 1024);
    const wider = widenedBytes(this.mem, want);
    if (wider) {
      this.mem = wider;
      return;
    }
    const next = byteBuffer(want);
    this.mem.copy(next, 0, 0, this.memUsed);
    this.mem = next;
  }

  private spill(): void {
    try {
      openUnnamed(this.dir, this.held);
    } catch {
      // no file can be made there (a read-only or missing TMPDIR): the bytes stay in memory, as a smaller plan's do;
      // a plan that takes more memory is better than none
      this.threshold = Number.POSITIVE_INFINITY;
      return;
    }
    descriptors.register(this, this.held, this);
    this.flush();
  }

  private flush(): void {
    let done = 0;
    while (done < this.memUsed) {
      done += writeSync(this.held.fd, this.mem, done, this.memUsed - done, this.flushed + done);
    }
    const written = this.memUsed;
    this.flushed += this.memUsed;
    this.memUsed = 0;
    // the buffer of the in-memory phase may be larger than a write needs: back to the write buffer's size (the same
    // memory when it is mapped and only about a write's worth of it was written, else a new buffer)
    if (this.mem.length > WRITE_BUFFER)
      this.mem =
        (written <= 2 * WRITE_BUFFER ? widenedBytes(this.mem, WRITE_BUFFER) : undefined) ?? byteBuffer(WRITE_BUFFER);
  }

  private readWindow(at: number, bytes: number): void {
    const length = Math.min(Math.max(bytes, READ_WINDOW), this.flushed - at);
    if (!this.window || this.window.length < length)
      this.window = Buffer.allocUnsafeSlow(Math.max(length, READ_WINDOW));
    let got = 0;
    while (got < length) {
      const n = readSync(this.held.fd, this.window, got, length - got, at + got);
      if (n === 0) throw new Error("the plan's temporary file ended early");
      got += n;
    }
    this.windowStart = at;
    this.windowEnd = at + length;
  }
}

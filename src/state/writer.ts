/**
 * The next state file, written as the run goes: each listing's elements, record and field value is written when the
 * run reads or uses it, so nothing is held to the end for the write (docs/performance.md, "Memory"). The file is a
 * temporary one beside the state file; only `commit` (after a run that read all it needed) syncs it and renames it
 * over the state file, so a failed or killed run leaves the previous state as it was.
 */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../model/errors.js";
import { STATE_FILE, type Marks, type StateHeader } from "./schema.js";

/** Lines are gathered into batches of about this many characters before they are written. */
const BATCH = 1_000_000;

export class StateWriter {
  private readonly temp: string;
  private readonly target: string;
  private fd: number | undefined;
  private batch: string[] = [];
  private size = 0;
  private count = 0;
  private listingNo = 0;
  /** the first write error: the run goes on (planning needs no state), the commit reports it */
  private failed: unknown;
  private done = false;

  constructor(dir: string, header: StateHeader, private readonly describe: (err: unknown) => string) {
    this.target = join(dir, STATE_FILE);
    this.temp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
    try {
      this.fd = openSync(this.temp, "w", 0o644);
    } catch (err) {
      this.failed = err;
    }
    this.line(JSON.stringify(header));
  }

  /** One line (JSON text without its newline). */
  line(text: string): void {
    if (this.done) return;
    this.count++;
    this.batch.push(text, "\n");
    this.size += text.length + 1;
    if (this.size >= BATCH) this.flush();
  }

  /** A number for the next listing: its elements carry it, its head comes after them. */
  nextListing(): number {
    return this.listingNo++;
  }

  private flush(): void {
    const text = this.batch.join("");
    this.batch = [];
    this.size = 0;
    if (this.fd === undefined || this.failed !== undefined) return;
    try {
      writeSync(this.fd, text);
    } catch (err) {
      this.failed = err;
    }
  }

  /** Writes the bookmarks and the last line, syncs, and replaces the state file. */
  async commit(marks: Marks): Promise<void> {
    if (this.done) return;
    this.line(JSON.stringify({ marks }));
    this.line(JSON.stringify({ end: { lines: this.count } }));
    this.flush();
    this.done = true;
    try {
      if (this.failed !== undefined || this.fd === undefined) throw this.failed;
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = undefined;
      await rename(this.temp, this.target);
    } catch (err) {
      await this.discard();
      throw new UserError(`cannot write the state file ${this.target}: ${this.describe(err)}; the previous state is kept`);
    }
  }

  /** Drops the temporary file (idempotent): the state file stays as it was. */
  async discard(): Promise<void> {
    this.done = true;
    this.batch = [];
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = undefined;
    }
    await rm(this.temp, { force: true });
  }
}

/**
 * The state's authentication (docs/operating.md, "State between runs"): an HMAC-SHA256 over every byte of the file
 * before its last line, keyed with a secret derived from the API key, so a state edited, cut, put together from other
 * files or written with another key is not used. What is on disk is the MAC and a key id, both HMACs of fixed words
 * under the key: neither gives the key nor the MAC key back.
 *
 * The previous state is read in full once (verified), then lines are read again when a run uses them: each line kept
 * for that is in a block of ~4 KB of lines with an 8-byte digest taken in the verified pass, and a line read again
 * whose block does not match it is not used (edited while the run held it open), so nothing is planned from bytes
 * that were not verified.
 */
import { createHash, createHmac, hash, type Hash } from "node:crypto";

export interface StateKey {
  /** shown in the header, so a state of another key is told from a tampered one: 16 hex digits, or null with no key */
  id: string | null;
  /** the MAC key: HMAC-SHA256(API key, "flowrules state mac v1") */
  mac: Buffer;
}

/**
 * The key of a state made with this API key. Without one (a library caller that has none) the MAC still tells a
 * damaged file, but is no secret: the CLI always has a key.
 */
export function stateKey(apiKey: string | undefined): StateKey {
  const secret = apiKey ?? "";
  return {
    id: apiKey ? createHmac("sha256", secret).update("flowrules state key id v1").digest("hex").slice(0, 16) : null,
    mac: createHmac("sha256", secret).update("flowrules state mac v1").digest(),
  };
}

/**
 * The running MAC of a file's bytes: HMAC-SHA256 built from two SHA-256s (RFC 2104), so that it can be read at a
 * checkpoint and go on (node's Hmac cannot be copied); its digests are those of `createHmac("sha256", key.mac)`.
 */
export class StateMac {
  private readonly inner: Hash;
  private readonly outerKey: Buffer;

  constructor(key: StateKey) {
    const block = Buffer.alloc(64);
    (key.mac.length > 64 ? createHash("sha256").update(key.mac).digest() : key.mac).copy(block);
    this.inner = createHash("sha256").update(block.map((b) => b ^ 0x36));
    this.outerKey = Buffer.from(block.map((b) => b ^ 0x5c));
  }

  update(bytes: Uint8Array | string): this {
    this.inner.update(bytes);
    return this;
  }

  /** The MAC of every byte so far; more may follow. */
  peek(): string {
    return createHash("sha256").update(this.outerKey).update(this.inner.copy().digest()).digest("hex");
  }

  /** The MAC of every byte (the last use). */
  digest(encoding: "hex"): string {
    return createHash("sha256").update(this.outerKey).update(this.inner.digest()).digest(encoding);
  }
}

export function stateMac(key: StateKey): StateMac {
  return new StateMac(key);
}

/** Bytes of a block's digest (docs/performance.md, "Memory": 8 bytes a block of lines read again together). */
export const LINE_DIGEST_BYTES = 8;

/**
 * A block's digest: the first 8 bytes of its SHA-256. Only ever compared with one taken of the verified file in
 * this process; changing a block unnoticed would take a second preimage of 64 bits.
 */
export function lineDigest(bytes: Uint8Array): Buffer {
  return hash("sha256", bytes, "buffer").subarray(0, LINE_DIGEST_BYTES);
}

/** 8 bytes per block of lines, in one growing typed array: no object per block. */
export class Digests {
  private bytes = new Uint8Array(LINE_DIGEST_BYTES * 1024);
  private count = 0;

  add(bytes: Uint8Array): void {
    const at = this.count * LINE_DIGEST_BYTES;
    if (at + LINE_DIGEST_BYTES > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, LINE_DIGEST_BYTES * 1024));
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(lineDigest(bytes), at);
    this.count++;
  }

  /** Whether `bytes` are those of the block numbered `n` as it was verified. */
  matches(n: number, bytes: Uint8Array): boolean {
    if (n < 0 || n >= this.count) return false;
    const d = lineDigest(bytes);
    const at = n * LINE_DIGEST_BYTES;
    for (let i = 0; i < LINE_DIGEST_BYTES; i++) if (d[i] !== this.bytes[at + i]) return false;
    return true;
  }

  /** Gives back what the last growth left unused (once every line is in). */
  trim(): void {
    this.bytes = this.bytes.slice(0, this.count * LINE_DIGEST_BYTES);
  }

  /** Bytes held (for the memory figures). */
  get heldBytes(): number {
    return this.bytes.byteLength;
  }
}

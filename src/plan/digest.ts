/**
 * A plan's digest: sha256 over its canonical JSON (keys sorted, `digest` itself left out). `apply` recomputes it to
 * refuse a plan file edited after review. The canonical form is streamed into the hash in chunks, never built as
 * one string: a plan of 100,000 changes would otherwise cost well over 100 MB for the digest alone.
 */
import { createHash, type Hash } from "node:crypto";
import type { Plan, SignedPlan } from "./types.js";

const CHUNK = 64 * 1024;

/** Writes the canonical JSON of `value` to `emit` piece by piece. */
function writeCanonical(value: unknown, emit: (s: string) => void): void {
  if (value === null || typeof value !== "object") {
    emit(JSON.stringify(value) ?? "null");
    return;
  }
  if (Array.isArray(value)) {
    emit("[");
    value.forEach((v, i) => {
      if (i > 0) emit(",");
      writeCanonical(v === undefined ? null : v, emit);
    });
    emit("]");
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  emit("{");
  entries.forEach(([k, v], i) => {
    emit(i > 0 ? `,${JSON.stringify(k)}:` : `${JSON.stringify(k)}:`);
    writeCanonical(v, emit);
  });
  emit("}");
}

export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  writeCanonical(value, (s) => parts.push(s));
  return parts.join("");
}

function hashCanonical(hash: Hash, value: unknown): void {
  let buf = "";
  writeCanonical(value, (s) => {
    buf += s;
    if (buf.length >= CHUNK) {
      hash.update(buf);
      buf = "";
    }
  });
  hash.update(buf);
}

export function planDigest(plan: Plan | (Plan & { digest?: string })): string {
  const { digest: _ignored, ...rest } = plan as Plan & { digest?: string };
  const hash = createHash("sha256");
  hashCanonical(hash, rest);
  return `sha256:${hash.digest("hex")}`;
}


export function withDigest(plan: Plan): SignedPlan {
  return { ...plan, digest: planDigest(plan) };
}

function collectKeys(v: unknown, into: Set<string>): void {
  if (v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    for (const x of v) collectKeys(x, into);
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    into.add(k);
    collectKeys(x, into);
  }
}

/**
 * The digest built piece by piece, for a plan read as a stream: the caller feeds the canonical form in order (keys
 * sorted), raw punctuation with `text` and values with `value`. Gives what planDigest gives for the same plan.
 */
export class CanonicalHasher {
  private readonly hash = createHash("sha256");
  private buf = "";

  text(s: string): void {
    this.buf += s;
    if (this.buf.length >= CHUNK) this.flush();
  }

  /**
   * One value of parsed JSON. JSON.stringify given the sorted list of every key in the value writes each object's
   * keys in that order — the canonical form, built natively in one string instead of thousands of small ones.
   */
  value(v: unknown): void {
    const keys = new Set<string>();
    collectKeys(v, keys);
    this.text(JSON.stringify(v, [...keys].sort()) ?? "null");
  }

  digest(): string {
    this.flush();
    return `sha256:${this.hash.digest("hex")}`;
  }

  private flush(): void {
    this.hash.update(this.buf);
    this.buf = "";
  }
}

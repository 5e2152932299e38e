/**
 * Small seeded pseudo-random generator (mulberry32). Not cryptographic: it only has to make demo data and fault draws
 * reproducible from a seed, and be fast enough to build 100,000 instances in well under a second.
 */

/** Mixes two 32-bit numbers into one (splitmix-style), so derived streams do not overlap for nearby seeds. */
export function mixSeed(a: number, b: number): number {
  let h = (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = mixSeed(seed >>> 0, 0x5eed) || 1;
  }

  /** A generator as a plain function (uniform in [0, 1)), for code that draws numbers and needs nothing else. */
  static fn(seed: number): () => number {
    const prng = new Prng(seed);
    return () => prng.next();
  }

  /** uniform in [0, 1) */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** integer in [min, max], both inclusive */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  /** Picks by weight; weights need not sum to 1. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [value, w] of entries) {
      r -= w;
      if (r < 0) return value;
    }
    const last = entries[entries.length - 1];
    if (last === undefined) throw new Error("weighted pick from an empty list");
    return last[0];
  }

  /** k distinct items, in pool order (stable output for the same draws) */
  sample<T>(pool: readonly T[], k: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(k, pool.length)) chosen.add(Math.floor(this.next() * pool.length));
    return [...chosen].sort((a, b) => a - b).map((i) => pool[i] as T);
  }
}

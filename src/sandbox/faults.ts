/**
 * Faults on demand: latency, random 503s, a per-key rate limit (429 + Retry-After) and connection resets after a
 * mutation was applied. Random draws come from PRNG streams seeded from the sandbox seed, so the same seed and the same
 * request sequence give the same faults.
 */
import { Prng, mixSeed } from "./prng.js";

export interface FaultSettings {
  /** delay before answering each /api request */
  latencyMs: number;
  /** share (0–1) of /api requests answered 503 before anything is done */
  failRate: number;
  /** requests a minute per API key (sliding 60 s window); 0 = off */
  rateLimitPerMin: number;
  /** the window of rateLimitPerMin, default 60 s; tests and the benchmark shorten it to keep runs short */
  rateLimitWindowMs: number;
  /** share (0–1) of successful mutations (POST) applied and then answered by closing the connection */
  resetRate: number;
}

export const NO_FAULTS: FaultSettings = {
  latencyMs: 0,
  failRate: 0,
  rateLimitPerMin: 0,
  rateLimitWindowMs: 60_000,
  resetRate: 0,
};

/** Throws RangeError on a value out of range; used by startSandbox, setFaults and the CLI. */
export function checkFaults(f: Partial<FaultSettings>): void {
  const rate = (name: string, v: number | undefined): void => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 1))
      throw new RangeError(`${name} must be between 0 and 1, got ${v}`);
  };
  const count = (name: string, v: number | undefined): void => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new RangeError(`${name} must be a number >= 0, got ${v}`);
  };
  rate("failRate", f.failRate);
  rate("resetRate", f.resetRate);
  count("latencyMs", f.latencyMs);
  count("rateLimitPerMin", f.rateLimitPerMin);
  if (f.rateLimitWindowMs !== undefined && !(Number.isFinite(f.rateLimitWindowMs) && f.rateLimitWindowMs >= 1)) {
    throw new RangeError(`rateLimitWindowMs must be a number >= 1, got ${f.rateLimitWindowMs}`);
  }
}

export class Faults {
  private current: FaultSettings;
  private readonly failDraws: Prng;
  private readonly resetDraws: Prng;
  private readonly windows = new Map<string, number[]>();

  constructor(seed: number, settings: Partial<FaultSettings>) {
    checkFaults(settings);
    this.current = { ...NO_FAULTS, ...settings };
    this.failDraws = new Prng(mixSeed(seed, 0xfa11));
    this.resetDraws = new Prng(mixSeed(seed, 0x4e5e));
  }

  get settings(): FaultSettings {
    return { ...this.current };
  }

  set(partial: Partial<FaultSettings>): void {
    checkFaults(partial);
    const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
    this.current = { ...this.current, ...defined };
    if (!this.current.rateLimitPerMin) this.windows.clear();
  }

  delay(): Promise<void> {
    const ms = this.current.latencyMs;
    if (!ms) return Promise.resolve();
    // unref: a pending delay must not keep a closing process alive
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }

  shouldFail(): boolean {
    return this.current.failRate > 0 && this.failDraws.next() < this.current.failRate;
  }

  shouldReset(): boolean {
    return this.current.resetRate > 0 && this.resetDraws.next() < this.current.resetRate;
  }

  /**
   * Counts a request for `key`. Returns null when allowed, else the seconds until a slot frees (for Retry-After).
   * Refused requests do not count.
   */
  rateLimit(key: string, nowMs: number): number | null {
    const limit = this.current.rateLimitPerMin;
    if (!limit) return null;
    const windowMs = this.current.rateLimitWindowMs;
    const stamps = (this.windows.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    if (stamps.length >= limit) {
      this.windows.set(key, stamps);
      const oldest = stamps[0] ?? nowMs;
      return Math.max(1, Math.ceil((oldest + windowMs - nowMs) / 1000));
    }
    stamps.push(nowMs);
    this.windows.set(key, stamps);
    return null;
  }
}

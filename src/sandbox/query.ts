/** Typed access to query parameters. Empty values count as absent (as django-filter does); bad values are 400s. */
import { badRequest } from "./errors.js";

export class Query {
  constructor(readonly params: URLSearchParams) {}

  has(name: string): boolean {
    return this.params.getAll(name).some((v) => v.trim() !== "");
  }

  /** The last non-empty value (a repeated single-valued parameter: the last one wins). */
  one(name: string): string | undefined {
    const values = this.params
      .getAll(name)
      .map((v) => v.trim())
      .filter((v) => v !== "");
    return values[values.length - 1];
  }

  /** All values, whether repeated (`a=1&a=2`) or comma-separated (`a=1,2`), trimmed, empties dropped. */
  many(name: string): string[] {
    return this.params
      .getAll(name)
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== "");
  }

  int(name: string, range: { min?: number; max?: number } = {}): number | undefined {
    const raw = this.one(name);
    if (raw === undefined) return undefined;
    return parseIntStrict(raw, name, range);
  }

  ints(name: string): number[] {
    return this.many(name).map((v) => parseIntStrict(v, name, {}));
  }
}

export function parseIntStrict(raw: string, name: string, range: { min?: number; max?: number }): number {
  if (!/^[+-]?\d{1,15}$/.test(raw)) throw badRequest(`${name} must be an integer, got "${raw}".`);
  const n = Number(raw);
  const { min, max } = range;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    const bounds =
      max === undefined ? `at least ${min}` : min === undefined ? `at most ${max}` : `between ${min} and ${max}`;
    throw badRequest(`${name} must be ${bounds}, got ${n}.`);
  }
  return n;
}

/** The query as the request log shows it: repeated parameters become arrays. */
export function queryRecord(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

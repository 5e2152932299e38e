/**
 * A count with its noun, singular for one: `1 request`, `3 requests`, `1 entry` / `2 entries` (`many` given). Every
 * "N things" a person reads goes through here, so no message says `1 requests`.
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

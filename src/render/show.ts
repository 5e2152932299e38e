/** Values in words, as the explain and rule-test views show them: JSON for data, and words for "no value". */
export function show(v: unknown): string {
  if (v === undefined) return "(no value)";
  return JSON.stringify(v) ?? String(v);
}

/** A filter's value as written, e.g. `[running]` → `running`, `[a, b]` → `a, b`. */
export function showWritten(v: unknown): string {
  if (Array.isArray(v)) return v.map(String).join(", ");
  return String(v);
}

/** Instance ids, sorted: `1, 2, 5`, or `none`. */
export function showIds(ids: readonly number[]): string {
  return ids.length === 0 ? "none" : [...ids].sort((a, b) => a - b).join(", ");
}

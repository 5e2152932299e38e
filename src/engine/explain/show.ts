/** Values as an explanation shows them: JSON for data, and words for "no value". */
export function show(v: unknown): string {
  if (v === undefined) return "(no value)";
  return JSON.stringify(v) ?? String(v);
}

/** A filter's value as written, e.g. `[running]` → `running`, `[a, b]` → `a, b`. */
export function showWritten(v: unknown): string {
  if (Array.isArray(v)) return v.map(String).join(", ");
  return String(v);
}

/** Small guards every layer uses on data of unknown shape. */

/** A plain object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The message of anything thrown, for one-line errors. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

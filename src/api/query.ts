/**
 * Query-string serialisation for the list endpoints (docs/service.md: "List instances", "Form-field values"): `status` is a repeated parameter
 * (?status=a&status=b); every other array is comma-joined (tags, ordering, instance_ids); null/undefined are omitted.
 */

export type QueryValue = string | number | boolean | null | undefined | Array<string | number>;
export type Query = Record<string, QueryValue>;

/** Parameters sent once per value instead of comma-joined. */
const REPEATED = new Set(["status"]);

export function serializeQuery(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (value.length === 0) continue; // an empty filter means "no filter", not "match nothing"
      if (REPEATED.has(key)) for (const v of value) params.append(key, String(v));
      else params.append(key, value.map(String).join(","));
    } else {
      params.append(key, String(value));
    }
  }
  return params.toString();
}

/** `path?query`, or just `path` when the query is empty. */
export function withQuery(path: string, query: Query): string {
  const qs = serializeQuery(query);
  return qs ? `${path}?${qs}` : path;
}

/** A path parameter: a non-negative safe integer, so nothing can be smuggled into the path. */
export function pathId(name: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  return String(value);
}

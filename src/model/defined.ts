/**
 * Optional fields copied between layers: `{ a, ...defined({ b, c: x.c }) }` says once what
 * `...(b !== undefined ? { b } : {}), ...(x.c !== undefined ? { c: x.c } : {})` says twice. In src/model, the lowest
 * room, so every layer may use it.
 */

/** The keys of T whose value may be undefined. */
type OptionalKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** T with each key that may be undefined made optional, and never present with an undefined value. */
export type Defined<T> = { [K in Exclude<keyof T, OptionalKeys<T>>]: T[K] } & {
  [K in OptionalKeys<T>]?: Exclude<T[K], undefined>;
};

/**
 * `fields` without the keys whose value is undefined (null, 0, "" and false stay). A key left out is absent, not
 * present and undefined: `in`, `Object.keys`, a spread over defaults and JSON key order tell the two apart.
 */
export function defined<T extends object>(fields: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}

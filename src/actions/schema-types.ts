/** The subset of JSON Schema (draft 2020-12) the action fragments and the assembled rule-file schema use. */
export type JsonSchema = { [key: string]: unknown };

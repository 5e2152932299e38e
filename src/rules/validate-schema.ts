/**
 * The rule-file schema's validators: the whole file, and one per action kind. They are ajv's code compiled ahead of
 * time by `npm run schema` (./validators.generated.ts, from ./write-validators.ts), so a run loads them instead of
 * compiling the schema (docs/performance.md, "Start-up"); test/rules/validators.test.ts checks they are current and
 * answer as ajv's own compilation does.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import * as validators from "./validators.generated.js";

export { isRuntimeValue } from "./schema-formats.js";

const byName = validators as unknown as Record<string, ValidateFunction | undefined>;

export function validateFile(data: unknown): ErrorObject[] {
  const v = validators.file;
  return v(data) ? [] : [...(v.errors ?? [])];
}

/** Validates one action entry against the schema of the kind it names. */
export function validateAction(kind: string, data: unknown): ErrorObject[] {
  const v = byName[`action_${kind}`];
  if (!v) return [];
  return v(data) ? [] : [...(v.errors ?? [])];
}

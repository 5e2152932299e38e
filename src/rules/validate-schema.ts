/**
 * The rule-file schema's validators: the whole file, and one per action kind. They are ajv's code compiled ahead of
 * time by `npm run schema` (./validators.generated.ts, from ./write-validators.ts), so a run loads them instead of
 * compiling the schema (docs/performance.md, "Start-up"); test/rules/validators.test.ts checks they are current and
 * answer as ajv's own compilation does. When the action kinds are not those they were generated for, the schema is
 * compiled when first needed (./validators-now.ts).
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import * as generated from "./validators.generated.js";
import { kindsFingerprint } from "./kinds-fingerprint.js";

export { isRuntimeValue } from "./schema-formats.js";

// the compiler of the validators now (with the schema, zod and ajv) is loaded only when the kinds differ: then, before
// this module's first use, so that validating stays synchronous
const now = generated.KINDS === kindsFingerprint() ? undefined : await import("./validators-now.js");

let chosen: Record<string, ValidateFunction | undefined> | undefined;

function validators(): Record<string, ValidateFunction | undefined> {
  chosen ??= now === undefined ? (generated as unknown as Record<string, ValidateFunction>) : now.rulesValidatorsNow();
  return chosen;
}

export function validateFile(data: unknown): ErrorObject[] {
  const v = validators().file;
  if (!v) throw new Error("no rule-file validator");
  return v(data) ? [] : [...(v.errors ?? [])];
}

/** Validates one action entry against the schema of the kind it names. */
export function validateAction(kind: string, data: unknown): ErrorObject[] {
  const v = validators()[`action_${kind}`];
  if (!v) return [];
  return v(data) ? [] : [...(v.errors ?? [])];
}

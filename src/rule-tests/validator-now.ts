/**
 * The rule-test validator as ajv compiles it when the run needs it: what ./validator.generated.ts holds ahead of time
 * (./write-validator.ts writes it with the same options and formats). The schema names the mutating kinds, so a run
 * whose kinds are not those it was generated for compiles it now (src/rules/validators-now.ts, `kindsFingerprint`).
 */
import type { Options, ValidateFunction } from "ajv";
import { ajv2020 } from "../rules/validators-now.js";
import { kindsFingerprint } from "../rules/kinds-fingerprint.js";
import { FORMATS } from "./schema-formats.js";
import { testFileJsonSchema } from "./schema.js";
import * as generated from "./validator.generated.js";

/** ajv's options for the rule-test schema, ahead of time and now alike. */
export const TESTS_AJV_OPTIONS: Options = { allErrors: true, verbose: true, strict: false };

let chosen: ValidateFunction | undefined;

/** The validator for this run's kinds: compiled ahead of time, or now when the kinds differ. */
export function testFileValidator(): ValidateFunction {
  if (chosen) return chosen;
  if (generated.KINDS === kindsFingerprint()) {
    chosen = generated.validate;
    return chosen;
  }
  const Ajv2020 = ajv2020();
  const ajv = new Ajv2020(TESTS_AJV_OPTIONS);
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema(testFileJsonSchema());
  chosen = ajv.getSchema(String(testFileJsonSchema().$id));
  if (!chosen) throw new Error("the rule-test schema did not compile");
  return chosen;
}

/**
 * The rule-file validators as ajv compiles them when the run needs them: what ./validators.generated.ts holds ahead of
 * time (./write-validators.ts writes it with the same options, formats and exports). The compiled-ahead ones are for
 * the action kinds they were generated with; a run whose kinds differ (a kind added before `npm run schema` ran
 * again, or a test's own kind) compiles the schema now instead (./validate-schema.ts decides, by `kindsFingerprint`).
 */
import { createRequire } from "node:module";
import type { Options, ValidateFunction } from "ajv";
import { ACTIONS } from "../actions/index.js";
import { buildRulesSchema, SCHEMA_ID } from "./schema.js";
import { FORMATS } from "./schema-formats.js";

/** ajv's options for the rule-file schema, ahead of time and now alike. */
export const RULES_AJV_OPTIONS: Options = { allErrors: true, verbose: true, strict: true };

/** The export of each validator: `file` (a whole rule file) and `action_<kind>` (one action entry of that kind). */
export function validatorRefs(): Record<string, string> {
  return { file: SCHEMA_ID, ...Object.fromEntries(ACTIONS.map((m) => [`action_${m.kind}`, `${SCHEMA_ID}#/$defs/action_${m.kind}`])) };
}

type AjvClass = new (options: Options) => {
  addFormat(name: string, format: { type: "string"; validate: (s: string) => boolean }): unknown;
  addSchema(schema: object): unknown;
  getSchema(ref: string): ValidateFunction | undefined;
};

/** ajv's 2020-12 class, loaded only when a schema is compiled (it is CommonJS: required, synchronously). */
export function ajv2020(): AjvClass {
  return (createRequire(import.meta.url)("ajv/dist/2020.js") as { default: AjvClass }).default;
}

/** The rule-file validators compiled now, by export name. */
export function rulesValidatorsNow(): Record<string, ValidateFunction> {
  const Ajv2020 = ajv2020();
  const ajv = new Ajv2020(RULES_AJV_OPTIONS);
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema(buildRulesSchema());
  const out: Record<string, ValidateFunction> = {};
  for (const [name, ref] of Object.entries(validatorRefs())) {
    const v = ajv.getSchema(ref);
    if (!v) throw new Error(`${ref} did not compile`);
    out[name] = v;
  }
  return out;
}

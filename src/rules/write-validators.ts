/**
 * `npm run schema`: writes ./validators.generated.ts, the rule-file schema's validators compiled by ajv ahead of time
 * (./standalone.ts), so that `validate`, `plan` and `test` compile no schema when they run. A test checks the
 * committed file is current and answers as ajv's own compilation does.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildRulesSchema } from "./schema.js";
import { FORMATS } from "./schema-formats.js";
import { ajvFor, standaloneModuleText, type Ajv } from "./standalone.js";
import { RULES_AJV_OPTIONS, validatorRefs } from "./validators-now.js";
import { kindsFingerprint } from "./kinds-fingerprint.js";

export const VALIDATORS_FILE = fileURLToPath(new URL("../../src/rules/validators.generated.ts", import.meta.url));

/** The ajv of the rule-file schema: the options and formats the generated validators are compiled with. */
export function rulesAjv(): Ajv {
  const ajv = ajvFor(RULES_AJV_OPTIONS);
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema(buildRulesSchema());
  return ajv;
}

export function renderRulesValidators(): string {
  return standaloneModuleText(rulesAjv(), validatorRefs(), {
    formats: "./schema-formats.js",
    kinds: kindsFingerprint(),
    source: "src/rules/write-validators.ts",
    test: "test/rules/validators.test.ts",
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(VALIDATORS_FILE, renderRulesValidators());
  process.stdout.write(`wrote ${VALIDATORS_FILE}\n`);
}

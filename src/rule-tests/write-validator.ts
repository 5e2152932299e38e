/**
 * `npm run schema`: writes ./validator.generated.ts, the rule-test schema's validator compiled by ajv ahead of time
 * (src/rules/standalone.ts), so that `flowrules test` compiles no schema when it runs. A test checks the committed
 * file is current and answers as ajv's own compilation does.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ajvFor, standaloneModuleText, type Ajv } from "../rules/standalone.js";
import { kindsFingerprint } from "../rules/kinds-fingerprint.js";
import { FORMATS } from "./schema-formats.js";
import { TEST_SCHEMA_ID, testFileJsonSchema } from "./schema.js";
import { TESTS_AJV_OPTIONS } from "./validator-now.js";

export const VALIDATOR_FILE = fileURLToPath(new URL("../../src/rule-tests/validator.generated.ts", import.meta.url));

/** The ajv of the rule-test schema: the options and formats the generated validator is compiled with. */
export function testsAjv(): Ajv {
  const ajv = ajvFor(TESTS_AJV_OPTIONS);
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema(testFileJsonSchema());
  return ajv;
}

export function renderTestsValidator(): string {
  return standaloneModuleText(
    testsAjv(),
    { validate: TEST_SCHEMA_ID },
    {
      formats: "./schema-formats.js",
      kinds: kindsFingerprint(),
      source: "src/rule-tests/write-validator.ts",
      test: "test/rule-tests/validator.test.ts",
    },
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(VALIDATOR_FILE, renderTestsValidator());
  process.stdout.write(`wrote ${VALIDATOR_FILE}\n`);
}

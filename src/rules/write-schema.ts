/** `npm run schema`: writes schemas/rules.schema.json from the same object ajv uses (a test checks it is current). */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildRulesSchema } from "./schema.js";

/** The committed file's exact text: stable key order, two-space indent, trailing newline. */
export function renderRulesSchema(): string {
  return `${JSON.stringify(buildRulesSchema(), null, 2)}\n`;
}

export const SCHEMA_FILE = fileURLToPath(new URL("../../schemas/rules.schema.json", import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_FILE, renderRulesSchema());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}

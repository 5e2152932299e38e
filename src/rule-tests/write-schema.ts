/** Writes schemas/rules-test.schema.json from the zod definition: `npm run schema`. */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { testFileJsonSchema } from "./schema.js";

export const TEST_SCHEMA_FILE = "schemas/rules-test.schema.json";

export function testSchemaText(): string {
  return `${JSON.stringify(testFileJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(TEST_SCHEMA_FILE, testSchemaText());
  process.stdout.write(`wrote ${TEST_SCHEMA_FILE}\n`);
}

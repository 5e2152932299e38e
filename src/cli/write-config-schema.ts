/** `npm run schema`: writes schemas/flowrules.config.schema.json from the zod schema that checks the file. */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildConfigJsonSchema } from "../model/config.js";

export const CONFIG_SCHEMA_FILE = fileURLToPath(new URL("../../schemas/flowrules.config.schema.json", import.meta.url));

/** The committed file's exact text (test/cli/profiles.test.ts checks it is current). */
export function configSchemaText(): string {
  return `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONFIG_SCHEMA_FILE, configSchemaText());
  process.stdout.write(`wrote ${CONFIG_SCHEMA_FILE}\n`);
}

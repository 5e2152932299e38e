/** Writes the schemas of the verbs' JSON results (apply, test, history, forecast) from their zod definitions: `npm run schema`. */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { applyResultJsonSchema } from "./apply/json-schema.js";
import { testResultsJsonSchema } from "./test-results/json-schema.js";
import { historyJsonSchema } from "./history/json-schema.js";
import { forecastJsonSchema } from "./forecast/json-schema.js";

export const RESULT_SCHEMA_FILES = {
  "schemas/apply-result.schema.json": applyResultJsonSchema,
  "schemas/test-results.schema.json": testResultsJsonSchema,
  "schemas/history.schema.json": historyJsonSchema,
  "schemas/forecast.schema.json": forecastJsonSchema,
} as const;

export function resultSchemaText(file: keyof typeof RESULT_SCHEMA_FILES): string {
  return `${JSON.stringify(RESULT_SCHEMA_FILES[file](), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of Object.keys(RESULT_SCHEMA_FILES) as Array<keyof typeof RESULT_SCHEMA_FILES>) {
    await writeFile(file, resultSchemaText(file));
    process.stdout.write(`wrote ${file}\n`);
  }
}

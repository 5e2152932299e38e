/**
 * `npm run build` (after tsc): writes dist/cli/value-flags.json, the flags of the program that take a value, which a
 * completion Tab reads instead of building the program (./tab.ts).
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { completionSpec, valueFlags } from "./completion.js";
import { buildProgram } from "./program.js";
import { VALUE_FLAGS_FILE } from "./tab.js";

/** The table's text: the flags sorted, one JSON array. */
export function valueFlagsText(): string {
  return `${JSON.stringify([...valueFlags(completionSpec(buildProgram()))].sort())}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(new URL(VALUE_FLAGS_FILE, import.meta.url), valueFlagsText());
}

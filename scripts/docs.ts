/** `npm run docs`: rewrites the generated reference pages docs/rules.md and docs/cli.md. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedDocs } from "./docs/generate.js";

// compiled to dist-extra/scripts/docs.js; the repository root is two levels up
const root = new URL("../../", import.meta.url).href;
for (const doc of generatedDocs(root)) {
  const path = fileURLToPath(new URL(doc.file, root));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, doc.text);
  process.stdout.write(`wrote ${doc.file}\n`);
}

#!/usr/bin/env node
/**
 * Writes a large rule set for measuring validation (docs/performance.md, "Many rules"): FILES files of PER rules each
 * (a rule file holds at most 1,000 entries per list), every rule completing a step of workflow 1042.
 * `--steps N` spreads them over N steps (default: one step each); `--same-step` puts them all on step 20111, where
 * every pair of rules may conflict.
 *
 *   node scripts/many-rules.mjs DIR --files 20 --per 1000
 *   /usr/bin/time -v node dist/cli/index.js validate DIR
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    files: { type: "string", default: "20" },
    per: { type: "string", default: "1000" },
    steps: { type: "string" },
    "same-step": { type: "boolean", default: false },
  },
});
const dir = positionals[0];
if (!dir) {
  console.error("usage: node scripts/many-rules.mjs DIR [--files 20] [--per 1000] [--steps N | --same-step]");
  process.exit(1);
}
const files = Number(values.files);
const per = Number(values.per);
const steps = values["same-step"] ? 1 : Number(values.steps ?? files * per);

await rm(dir, { recursive: true, force: true });
await mkdir(dir, { recursive: true });
for (let f = 0; f < files; f++) {
  const lines = ["version: 1", "rules:"];
  for (let i = 0; i < per; i++) {
    const n = f * per + i;
    lines.push(
      `  - name: rule-${n}`,
      "    workflow: 1042",
      "    actions:",
      `      - complete_step: { step: ${20111 + (n % steps)} }`,
    );
  }
  await writeFile(join(dir, `rules-${String(f).padStart(3, "0")}.yaml`), `${lines.join("\n")}\n`);
}
console.log(`${files * per} rules in ${files} files under ${dir}`);

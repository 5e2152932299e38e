/**
 * `npm run bench:startup [-- --runs N] [-- --cli PATH]`: start-up of the built CLI beside `node -e 0`
 * (./startup.ts); the Markdown table on stdout, the JSON in bench/results/startup.json. `--cli` measures another
 * build (e.g. an older commit's dist/cli/index.js) against this repository's rules/.
 */
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { renderStartup, runStartup } from "./startup.js";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "20" },
      cli: { type: "string" },
      out: { type: "string", default: "bench/results" },
    },
    strict: true,
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a whole number ≥ 1, got ${JSON.stringify(values.runs)}`);
  const cwd = process.cwd();
  const cli = resolve(values.cli ?? join(cwd, "dist/cli/index.js"));
  const results = await runStartup({ cli, cwd, runs }, (line) => void process.stderr.write(`${line}\n`));
  process.stdout.write(renderStartup(results));
  if (values.out !== "-") {
    const file = join(values.out, "startup.json");
    await writeFile(file, `${JSON.stringify({ generated_at: new Date().toISOString(), cli, ...results }, null, 2)}\n`);
    process.stderr.write(`results written to ${file}\n`);
  }
  return results.rows.every((r) => r.met !== false) ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

/**
 * `npm run bench`: the benchmark — requests, wall time, time under the production rate limit, peak
 * memory and evaluation throughput of flowrules, side by side with a naive script and the floor the API allows.
 * Progress on stderr; the Markdown table on stdout; the JSON under bench/results/ (latest.json and a dated copy).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseBenchArgs, USAGE, type BenchOptions } from "./args.js";
import { millionTargets, renderMillion, runMillion } from "./million.js";
import { runBench } from "./bench.js";
import { renderPaced, runPaced } from "./paced.js";
import { renderMarkdown } from "./table.js";
import { renderState, runStateScenario, stateTargets } from "./state.js";
import { renderWatch, runWatchScenario, watchTargets } from "./watch.js";

async function main(): Promise<number> {
  let opts;
  try {
    opts = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 1;
  }
  if (opts === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  if (opts.million) return million(opts.million, opts.seed, opts.outDir, log);
  const bench = await runBench(opts, log);
  process.stdout.write(renderMarkdown(bench));
  const windowMs = opts.pacedWindowMs ?? 0;
  const paced = windowMs > 0 ? await runPaced({ ...opts, windowMs }, log) : undefined;
  if (paced) process.stdout.write(`\n${renderPaced(paced)}`);
  const stateSizes = opts.stateSizes ?? [];
  const state = stateSizes.length > 0 ? await runStateScenario({ ...opts, sizes: stateSizes }, log) : undefined;
  if (state) process.stdout.write(`\n${renderState(state)}`);
  const watchSizes = opts.watchSizes ?? [];
  const watch =
    watchSizes.length > 0
      ? await runWatchScenario(
          {
            seed: opts.seed,
            latencyMs: opts.latencyMs,
            sizes: watchSizes,
            idleSeconds: opts.watchIdleSeconds ?? 120,
            eventsSeconds: opts.watchEventsSeconds ?? 180,
          },
          log,
        )
      : undefined;
  if (watch) process.stdout.write(`\n${renderWatch(watch)}`);
  const results = {
    ...bench,
    ...(paced ? { paced } : {}),
    ...(state ? { state: { runs: state, targets: stateTargets(state) } } : {}),
    ...(watch ? { watch: { runs: watch, targets: watchTargets(watch) } } : {}),
  };
  if (opts.outDir) {
    await mkdir(opts.outDir, { recursive: true });
    const json = `${JSON.stringify(results, null, 2)}\n`;
    const stamp = results.generated_at.replace(/[:.]/g, "-");
    await writeFile(join(opts.outDir, "latest.json"), json);
    await writeFile(join(opts.outDir, `${stamp}.json`), json);
    process.stderr.write(`results written to ${join(opts.outDir, "latest.json")}\n`);
  }
  return 0;
}

async function million(
  o: NonNullable<BenchOptions["million"]>,
  seed: number,
  outDir: string | undefined,
  log: (line: string) => void,
): Promise<number> {
  const run = await runMillion({ ...o, seed }, log);
  process.stdout.write(renderMillion(run));
  if (outDir) {
    await mkdir(outDir, { recursive: true });
    const json = `${JSON.stringify({ generated_at: new Date().toISOString(), million: run, targets: millionTargets(run) }, null, 2)}\n`;
    await writeFile(join(outDir, "million.json"), json);
    process.stderr.write(`results written to ${join(outDir, "million.json")}\n`);
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);

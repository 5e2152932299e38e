/**
 * `npm run bench:sandbox`: how fast the sandbox answers a 500-item list page (4.2) holding 100,000 instances.
 * Measured over real HTTP on loopback, after one warm-up request per query (the first request of an ordering sorts
 * and caches it; that cold figure is printed separately).
 */
import { performance } from "node:perf_hooks";
import { startSandbox } from "#flowrules/sandbox/index.js";

const INSTANCES = 100_000;
const ROUNDS = 30;
const QUERIES = [
  "page_size=500",
  "page_size=500&status=running&active_step_id=20111&tags=expenses",
  "page_size=500&ordering=-last_updated_time",
  "page_size=500&ordering=status,-priority,name&status=running&status=aborted",
];

async function timed(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { Authorization: "Api-Key sandbox-admin" } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return performance.now() - t0;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const sandbox = await startSandbox({ port: 0, instances: INSTANCES, seed: 1 });
  const startMs = performance.now() - t0;
  const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;
  try {
    process.stdout.write(`sandbox with ${INSTANCES.toLocaleString("en")} instances started in ${fmt(startMs)}\n`);
    const all: number[] = [];
    for (const q of QUERIES) {
      const url = `${sandbox.baseUrl}/v2/processes/1042/instances/?${q}`;
      const cold = await timed(url);
      const times: number[] = [];
      for (let k = 0; k < ROUNDS; k++) times.push(await timed(url));
      all.push(...times);
      process.stdout.write(
        `  ${q}\n    cold ${fmt(cold)}, median ${fmt(quantile(times, 0.5))}, p95 ${fmt(quantile(times, 0.95))}\n`,
      );
    }
    process.stdout.write(
      `500-item list page at ${INSTANCES.toLocaleString("en")} instances: median ${fmt(quantile(all, 0.5))}, p95 ${fmt(quantile(all, 0.95))}\n`,
    );
  } finally {
    await sandbox.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:sandbox failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});

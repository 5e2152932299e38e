/** Command line of `npm run bench` (node dist-extra/bench/src/run.js [options]). */
import { parseArgs } from "node:util";

export interface BenchOptions {
  /** sandbox sizes N */
  sizes: number[];
  latencyMs: number;
  /** flowrules' requests in flight (the client default) */
  concurrency: number;
  seed: number;
  /** the naive baseline runs up to this N; above it, it is modelled */
  naiveMax: number;
  /** instances the bulk-abort scenario aborts (0 = skip it) */
  abortCount: number;
  /** instances of the CPU-only evaluation loops */
  cpuInstances: number;
  /** instances of the multi-rule scenario (24 rules over four workflows); 0 or absent skips it */
  multiRuleN?: number;
  /** run the sides in this process (RSS then includes the sandbox); the test does */
  inProcess: boolean;
  /** folder for latest.json and the dated copy; undefined = do not write */
  outDir: string | undefined;
  /** window of the paced scenario (src/bench/paced.ts); 0 = skip it */
  pacedWindowMs?: number;
  /** sizes of the state scenario (bench/src/state.ts); empty or absent skips it */
  stateSizes?: number[];
  /** sizes of the watch scenario (bench/src/watch.ts); empty or absent skips it */
  watchSizes?: number[];
  /** seconds of its idle and events phases */
  watchIdleSeconds?: number;
  watchEventsSeconds?: number;
  /** the scenario at a million instances (bench/src/million.ts) instead of the others; its size (default 1,000,000) */
  million?: { n: number; resume: boolean; stateless: boolean; gc: boolean; imageMalloc: boolean };
}

export const USAGE = `usage: npm run bench -- [options]
  --sizes 1000,10000,100000   sandbox sizes N (default: all three)
  --quick                     1000 and 10000 only, abort scenario of 1,000, CPU loop of 20,000 (about 3 minutes)
  --naive-max N               run the naive baseline up to this N, model it above (default 10000)
  --latency MS                sandbox latency per request (default 20)
  --concurrency N             flowrules requests in flight (default 4, the client default)
  --abort-count N             instances for the bulk-abort scenario (default 10000; 0 skips it)
  --cpu N                     instances for the evaluation loops (default 100000)
  --multi-rule N              instances for the multi-rule scenario, 24 rules (default 20000; 0 skips it)
  --seed N                    sandbox seed (default 1)
  --in-process                run both sides in this process (RSS then includes the sandbox)
  --out DIR                   where to write latest.json and a dated copy (default bench/results; "-" = nowhere)
  --paced-window MS           window of the paced scenario, 100 requests per window (default 6000, a scaled minute; 0 skips it)
  --state-sizes 20000,100000  sizes of the --state scenario, 1 % churn (default both; 0 skips it; --quick: 20000)
  --watch-sizes 20000,100000  sizes of the watch --apply scenario, real minutes at 100 a minute (default both; 0 skips it; --quick: 20000)
  --watch-idle SECONDS        its idle phase (default 120; --quick: 60)
  --watch-events SECONDS      its phase of people's marks to react to (default 180; --quick: 90)
  --million                   only the scenario at 1,000,000 instances: first sync, loading the state, a first sync cut
                              at 30/60/90 % and resumed, a steady run, 1 % churn, an apply of 1,000 changes (~1 h)
  --million-instances N       its size (default 1000000)
  --no-resume                 without the cut and resumed first sync (about half the time)
  --stateless                 and a stateless plan at the end, for comparison
  --gc                        its runs with node --trace-gc: the most live on V8's heap after a full collection
  --image-malloc              its runs with the glibc setting the Docker image and the systemd unit set
                              (MALLOC_MMAP_THRESHOLD_=131072; docs/operating.md, "Memory on a large tenant")`;

function int(name: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  const n = Number(v.replace(/_/g, ""));
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

export function parseBenchArgs(argv: string[]): BenchOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string" },
      quick: { type: "boolean", default: false },
      "naive-max": { type: "string" },
      latency: { type: "string" },
      concurrency: { type: "string" },
      "abort-count": { type: "string" },
      cpu: { type: "string" },
      seed: { type: "string" },
      "multi-rule": { type: "string" },
      "in-process": { type: "boolean", default: false },
      out: { type: "string" },
      "paced-window": { type: "string" },
      "state-sizes": { type: "string" },
      "watch-sizes": { type: "string" },
      "watch-idle": { type: "string" },
      "watch-events": { type: "string" },
      million: { type: "boolean", default: false },
      "million-instances": { type: "string" },
      "no-resume": { type: "boolean", default: false },
      stateless: { type: "boolean", default: false },
      gc: { type: "boolean", default: false },
      "image-malloc": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return "help";
  const quick = values.quick === true;
  const sizes = values.sizes
    ? values.sizes.split(",").map((s) => int("sizes", s.trim(), 0, 1))
    : quick
      ? [1_000, 10_000]
      : [1_000, 10_000, 100_000];
  const out = values.out ?? "bench/results";
  return {
    sizes,
    latencyMs: int("latency", values.latency, 20),
    concurrency: int("concurrency", values.concurrency, 4, 1),
    seed: int("seed", values.seed, 1),
    naiveMax: int("naive-max", values["naive-max"], 10_000),
    abortCount: int("abort-count", values["abort-count"], quick ? 1_000 : 10_000),
    cpuInstances: int("cpu", values.cpu, quick ? 20_000 : 100_000, 1),
    multiRuleN: int("multi-rule", values["multi-rule"], 20_000),
    inProcess: values["in-process"] === true,
    outDir: out === "-" ? undefined : out,
    pacedWindowMs: int("paced-window", values["paced-window"], 6_000),
    stateSizes:
      values["state-sizes"] === undefined
        ? quick
          ? [20_000]
          : [20_000, 100_000]
        : values["state-sizes"]
            .split(",")
            .map((s) => int("state-sizes", s.trim(), 0))
            .filter((n) => n > 0),
    watchSizes:
      values["watch-sizes"] === undefined
        ? quick
          ? [20_000]
          : [20_000, 100_000]
        : values["watch-sizes"]
            .split(",")
            .map((s) => int("watch-sizes", s.trim(), 0))
            .filter((n) => n > 0),
    watchIdleSeconds: int("watch-idle", values["watch-idle"], quick ? 60 : 120, 10),
    watchEventsSeconds: int("watch-events", values["watch-events"], quick ? 90 : 180, 10),
    ...(values.million === true || values["million-instances"] !== undefined
      ? {
          million: {
            n: int("million-instances", values["million-instances"], 1_000_000, 1),
            resume: values["no-resume"] !== true,
            stateless: values.stateless === true,
            gc: values.gc === true,
            imageMalloc: values["image-malloc"] === true,
          },
        }
      : {}),
  };
}

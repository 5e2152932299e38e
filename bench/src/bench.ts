/**
 * The benchmark as a function: for each N a fresh sandbox (same seed, so the same data) per side, the side run and
 * measured, its work verified on the sandbox's data; then the bulk-abort scenario and the CPU-only loops.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import type { BenchOptions } from "./args.js";
import { measureCpu } from "./cpu.js";
import { runMultiRule, type MultiRuleRun } from "./multi-rule.js";
import { floorOf, naiveRequests, NAIVE_PAGE_SIZE } from "./floor.js";
import { countRequests, measureSide, REQUEST_KINDS, type Measured, type PhaseRequests } from "./measure.js";
import { judgeTargets, type AbortRun, type BenchResults, type SideRun, type SizeRun } from "./results.js";
import { ABORT_BATCH, WORKFLOW_ID, workloadOf, type Workload } from "./scenario.js";
import type { SideName } from "./side.js";
import { snapshotRunning, verify, type Verification } from "./verify.js";
import { duration } from "./table.js";

export type Log = (line: string) => void;

async function withSandbox<T>(o: BenchOptions, n: number, body: (sb: RunningSandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox({ port: 0, instances: n, seed: o.seed, latencyMs: o.latencyMs });
  try {
    return await body(sb);
  } finally {
    await sb.close();
  }
}

function sideRun(m: Measured, verification: Verification): SideRun {
  const [plan, apply] = m.result.phases;
  const planMs = plan?.wallMs ?? 0;
  const applyMs = apply?.wallMs ?? 0;
  return {
    modelled: false,
    requests: { plan: m.requests.plan, apply: m.requests.apply, total: m.requests.plan.total + m.requests.apply.total },
    wallMs: { plan: planMs, apply: applyMs, total: planMs + applyMs },
    rss: {
      planBytes: plan?.maxRssBytes ?? 0,
      applyBytes: apply?.maxRssBytes ?? 0,
      maxBytes: m.result.maxRssBytes,
      scope: m.rssScope,
    },
    outcome: m.result.outcome,
    verification,
  };
}

async function runSide(
  o: BenchOptions,
  n: number,
  side: SideName,
  log: Log,
  rulesYaml?: string,
): Promise<{ run: SideRun; workload: Workload }> {
  return withSandbox(o, n, async (sb) => {
    const { workload, expected } = workloadOf(sb.store.list(WORKFLOW_ID), n);
    const before = snapshotRunning(sb.store);
    const workDir = await mkdtemp(join(tmpdir(), `flowrules-bench-${side}-`));
    try {
      const options = { baseUrl: sb.baseUrl, concurrency: o.concurrency, workDir, ...(rulesYaml ? { rulesYaml } : {}) };
      const m = await measureSide(sb, { side, options }, o.inProcess);
      const v = verify(sb.store, expected, before);
      const run = sideRun(m, v);
      log(
        `  ${side.padEnd(9)} ${String(run.requests.total).padStart(6)} requests (plan ${run.requests.plan.total}, apply ${run.requests.apply.total}) ` +
          `in ${duration(run.wallMs.total)}; ${v.ok ? "work verified" : `WORK NOT DONE: ${JSON.stringify(v)}`}`,
      );
      return { run, workload };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });
}

/** The naive baseline's requests for a workload it was not run on: exact for its algorithm; time from a measured run. */
function modelNaive(w: Workload, msPerRequest: number, basis: string): SideRun {
  const r = naiveRequests(w);
  const kinds = (part: Partial<Record<(typeof REQUEST_KINDS)[number], number>>): PhaseRequests => {
    const c = countRequests([]);
    for (const [k, v] of Object.entries(part)) c.byKind[k as (typeof REQUEST_KINDS)[number]] = v;
    c.total = Object.values(part).reduce((a, b) => a + b, 0);
    return c;
  };
  const plan = kinds({ list: r.plan - w.selected, read: w.selected });
  const apply = kinds({ complete_step: w.completes, bulk_abort: w.aborts });
  return {
    modelled: true,
    requests: { plan, apply, total: r.total },
    wallMs: { plan: r.plan * msPerRequest, apply: r.apply * msPerRequest, total: r.total * msPerRequest },
    note: `modelled: ceil(selected/${NAIVE_PAGE_SIZE}) + selected + completes + aborts requests; ${msPerRequest.toFixed(1)} ms a request (${basis})`,
  };
}

/** One abort rule whose `when` keeps exactly `count` running claims (the lowest ids): a direct count of bulk aborts. */
async function runAbort(o: BenchOptions, log: Log): Promise<AbortRun | undefined> {
  // running claims are ~24% of the instances; 5x leaves a margin
  const n = o.abortCount * 5;
  return withSandbox(o, n, async (sb) => {
    const running = sb.store
      .list(WORKFLOW_ID)
      .filter((i) => i.completedTime === null && i.abortedTime === null)
      .map((i) => i.id)
      .sort((a, b) => a - b);
    const lastId = running[o.abortCount - 1];
    if (lastId === undefined) {
      log(`  abort scenario skipped: only ${running.length} running claims in ${n} instances`);
      return undefined;
    }
    const yaml = `version: 1
rules:
  - name: bench-abort-bulk
    workflow: ${WORKFLOW_ID}
    select: { status: [running] }
    when: instance.id <= ${lastId}
    actions: [ abort ]
`;
    const workDir = await mkdtemp(join(tmpdir(), "flowrules-bench-abort-"));
    try {
      const options = { baseUrl: sb.baseUrl, concurrency: o.concurrency, workDir, rulesYaml: yaml };
      const m = await measureSide(sb, { side: "flowrules", options }, o.inProcess);
      const aborted = running.slice(0, o.abortCount).filter((id) => sb.store.peek(id)?.abortedTime != null).length;
      const stillRunning = running.slice(o.abortCount).filter((id) => sb.store.peek(id)?.abortedTime == null).length;
      const [plan, apply] = m.result.phases;
      const run: AbortRun = {
        n,
        count: o.abortCount,
        planRequests: m.requests.plan,
        applyRequests: m.requests.apply,
        wallMs: { plan: plan?.wallMs ?? 0, apply: apply?.wallMs ?? 0 },
        verified: aborted === o.abortCount && stillRunning === running.length - o.abortCount,
      };
      log(
        `  aborted ${aborted}/${o.abortCount} with ${run.applyRequests.byKind.bulk_abort} bulk aborts (apply ${run.applyRequests.total} requests)`,
      );
      return run;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });
}

export async function runBench(o: BenchOptions, log: Log): Promise<BenchResults> {
  const started = performance.now();
  const load = loadavg();
  log(`evaluation loops over ${o.cpuInstances} instances…`);
  const cpu = await measureCpu(o.cpuInstances);
  log(`  engine ${cpu.evaluateInstancePerSec}/s, bare JSONata ${cpu.bareJsonataPerSec}/s`);

  const runs: SizeRun[] = [];
  const sizes = [...o.sizes].sort((a, b) => a - b);
  let naiveBasis: { msPerRequest: number; n: number } | undefined;
  const pending: Array<{ run: Omit<SizeRun, "naive">; index: number }> = [];
  for (const n of sizes) {
    log(`N = ${n}`);
    const f = await runSide(o, n, "flowrules", log);
    const floor = floorOf(f.workload);
    if (n <= o.naiveMax) {
      const naive = await runSide(o, n, "naive", log);
      naiveBasis = { msPerRequest: naive.run.wallMs.total / Math.max(1, naive.run.requests.total), n };
      runs.push({ n, workload: f.workload, floor, flowrules: f.run, naive: naive.run });
    } else {
      pending.push({ run: { n, workload: f.workload, floor, flowrules: f.run }, index: runs.length });
      runs.push({
        n,
        workload: f.workload,
        floor,
        flowrules: f.run,
        naive: modelNaive(f.workload, o.latencyMs, "assumed"),
      });
    }
  }
  // model the naive runs above --naive-max with the per-request time of the largest one measured
  const basis = naiveBasis ?? { msPerRequest: o.latencyMs + 1, n: 0 };
  const basisText = naiveBasis ? `measured at N = ${basis.n}` : `assumed: latency + 1 ms`;
  for (const p of pending)
    runs[p.index] = { ...p.run, naive: modelNaive(p.run.workload, basis.msPerRequest, basisText) };

  let abort: AbortRun | undefined;
  if (o.abortCount > 0) {
    log(`bulk abort of ${o.abortCount}`);
    abort = await runAbort(o, log);
  }

  let multi: MultiRuleRun | undefined;
  if (o.multiRuleN) {
    log(`multi-rule scenario at N = ${o.multiRuleN}`);
    multi = await runMultiRule({ seed: o.seed, latencyMs: o.latencyMs, n: o.multiRuleN }, log);
  }

  const partial: Omit<BenchResults, "targets"> = {
    format_version: 1,
    generated_at: new Date().toISOString(),
    total_ms: performance.now() - started,
    environment: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model.trim() ?? "unknown",
      loadavg_at_start: load,
    },
    config: {
      sizes,
      latency_ms: o.latencyMs,
      concurrency: o.concurrency,
      seed: o.seed,
      naive_max: o.naiveMax,
      abort_batch: ABORT_BATCH,
      rss: o.inProcess
        ? "getrusage max RSS of this one process (sandbox included)"
        : "getrusage max RSS of the child processes that ran the side — flowrules plan and apply each in its own, the naive script in one (the sandbox runs in the parent, not counted)",
    },
    runs,
    ...(abort ? { abort } : {}),
    ...(multi ? { multi } : {}),
    cpu,
  };
  return { ...partial, targets: judgeTargets(partial) };
}

/**
 * The benchmark's machinery on tiny N, in-process and without latency: both sides do the whole work (checked on the
 * sandbox's data), requests are counted by kind, flowrules sits on the floor, the naive count matches the model used
 * for sizes it is not run at, and the output renders. No timing assertion: timings depend on the machine.
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/src/args.js";
import { runBench } from "../../bench/src/bench.js";
import { floorOf, naiveRequests } from "../../bench/src/floor.js";
import { classify, countRequests } from "../../bench/src/measure.js";
import { renderMarkdown } from "../../bench/src/table.js";
import type { BenchOptions } from "../../bench/src/args.js";

const TINY: BenchOptions = {
  sizes: [400, 900],
  latencyMs: 0,
  concurrency: 4,
  seed: 3,
  naiveMax: 400,
  abortCount: 60,
  cpuInstances: 300,
  multiRuleN: 1500,
  inProcess: true,
  outDir: undefined,
};

describe("bench on tiny N", () => {
  it("runs both sides, verifies their work, counts requests and judges the targets", async () => {
    const r = await runBench(TINY, () => undefined);
    expect(r.runs.map((run) => run.n)).toEqual([400, 900]);

    const [small, large] = r.runs;
    if (!small || !large) throw new Error("missing runs");
    // both sides did exactly the work, and nothing else
    expect(small.workload.completes).toBeGreaterThan(0);
    expect(small.workload.aborts).toBeGreaterThan(0);
    expect(small.flowrules.verification?.ok).toBe(true);
    expect(small.naive.verification?.ok).toBe(true);
    expect(large.flowrules.verification?.ok).toBe(true);

    // flowrules on the floor; the naive count is what the model says (so modelled sizes are exact)
    expect(small.flowrules.requests.plan.total).toBe(floorOf(small.workload).plan);
    expect(small.flowrules.requests.apply.total).toBe(floorOf(small.workload).apply);
    expect(small.naive.requests.total).toBe(naiveRequests(small.workload).total);
    expect(small.naive.requests.plan.byKind.read).toBe(small.workload.selected);
    expect(small.naive.requests.apply.byKind.bulk_abort).toBe(small.workload.aborts);
    // one read: the newest instance, for the workflow's structure (the rules' fields are checked before selecting)
    expect(small.flowrules.requests.plan.byKind.read).toBe(1);
    expect(small.flowrules.requests.apply.byKind.complete_step).toBe(small.workload.completes);

    // above --naive-max the baseline is modelled, and says so
    expect(small.naive.modelled).toBe(false);
    expect(large.naive.modelled).toBe(true);
    expect(large.naive.requests.total).toBe(naiveRequests(large.workload).total);

    // the bulk-abort scenario aborts exactly its count in ceil(count/100) bulk requests
    expect(r.abort?.verified).toBe(true);
    expect(r.abort?.applyRequests.byKind.bulk_abort).toBe(1);
    expect(r.cpu.matched).toBeGreaterThan(0);

    // the multi-rule plan lists no distinct selection twice: at most the distinct-selection floor of list pages
    expect(r.multi?.rules).toBeGreaterThanOrEqual(20);
    expect(r.multi?.errors).toBe(0);
    expect(r.multi?.requests.list).toBeLessThanOrEqual(r.multi?.floorLists ?? 0);

    expect(r.targets.map((t) => t.id)).toEqual(["floor", "naive", "rss", "cpu", "abort"]);
    expect(r.targets.find((t) => t.id === "floor")?.met).toBe(true);
    expect(r.targets.find((t) => t.id === "rss")?.met).toBeNull();

    const md = renderMarkdown(r);
    expect(md).toContain("| N | run | plan requests |");
    expect(md).toContain("naive (modelled)");
    expect(md).toContain("**met**");
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
  });
});

describe("request classification", () => {
  it("names each endpoint of the spec", () => {
    expect(classify({ method: "GET", path: "/api/v2/processes/1042/instances/" })).toBe("list");
    expect(classify({ method: "GET", path: "/api/processes/1042/steps/20111/actions/50222/" })).toBe("field");
    expect(classify({ method: "GET", path: "/api/instances/100001/" })).toBe("read");
    expect(classify({ method: "POST", path: "/api/instances/100001/complete_step/" })).toBe("complete_step");
    expect(classify({ method: "POST", path: "/api/instances/bulk/abort" })).toBe("bulk_abort");
    expect(classify({ method: "GET", path: "/api/processes/" })).toBe("processes");
    expect(classify({ method: "DELETE", path: "/api/instances/1/" })).toBe("other");
    const c = countRequests([
      { method: "GET", path: "/api/instances/1/", status: 200 },
      { method: "POST", path: "/api/instances/bulk/abort", status: 503 },
    ]);
    expect(c).toMatchObject({ total: 2, notOk: 1, byKind: { read: 1, bulk_abort: 1 } });
  });
});

describe("bench arguments", () => {
  it("defaults to the three sizes of the issue, and --quick to the two small ones", () => {
    const full = parseBenchArgs([]);
    const quick = parseBenchArgs(["--quick"]);
    if (full === "help" || quick === "help") throw new Error("unexpected help");
    expect(full.sizes).toEqual([1_000, 10_000, 100_000]);
    expect(full.latencyMs).toBe(20);
    expect(full.outDir).toBe("bench/results");
    expect(quick.sizes).toEqual([1_000, 10_000]);
    const custom = parseBenchArgs(["--sizes", "1000,5000", "--naive-max", "0", "--out", "-"]);
    if (custom === "help") throw new Error("unexpected help");
    expect(custom).toMatchObject({ sizes: [1_000, 5_000], naiveMax: 0, outDir: undefined });
    expect(() => parseBenchArgs(["--sizes", "ten"])).toThrow(/--sizes/);
    expect(parseBenchArgs(["--help"])).toBe("help");
  });
});

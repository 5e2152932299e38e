/**
 * The benchmark's state scenario on a tiny N, in-process and without latency: every step runs, the plans with state
 * equal the stateless ones at the same moment, the runs with state ask for much less, and the table renders. No
 * timing assertion.
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/src/args.js";
import { renderState, runStateScenario, stateTargets } from "../../bench/src/state.js";

describe("bench: the --state scenario", () => {
  it("measures stateless and stateful runs on one sandbox, with equal plans, and each target (a)–(f)", async () => {
    const runs = await runStateScenario(
      { seed: 2, latencyMs: 0, concurrency: 4, sizes: [1500], inProcess: true },
      () => undefined,
    );
    const [run] = runs;
    if (!run) throw new Error("no run");
    expect(run.equal).toBe(true);
    expect(run.churned).toBeGreaterThan(0);
    const req = (key: string): number => run.steps.find((s) => s.key === key)?.requests ?? Number.NaN;
    expect(req("b")).toBeLessThan(req("a") / 4);
    expect(req("f")).toBeLessThanOrEqual(13);
    expect(run.steps.find((s) => s.key === "f")?.result.readAgain).toBe(0);
    expect(run.apply?.applied).toBeGreaterThan(0);
    const targets = stateTargets(runs);
    expect(targets.map((t) => t.text)).toContain("N = 1500: plans with state equal stateless plans (b–f)");
    // the targets (c)–(f) hold even at this size (the ratio of (b) and memory are for the real sizes)
    expect(targets.filter((t) => /^N = 1500: \([c-f]\)/.test(t.text) && !t.met)).toEqual([]);
    expect(targets.filter((t) => /^N = 1500: \([c-f]\)/.test(t.text))).toHaveLength(4);
    expect(renderState(runs)).toMatch(/^\| 1500 \| \(b\) with state after 1 % churn \| \d+ \| \d+ \| \d+ \| \d+ \|/m);
  }, 120_000);

  it("is skipped with --state-sizes 0 and sized by the flag", () => {
    expect(parseBenchArgs(["--state-sizes", "0"])).toMatchObject({ stateSizes: [] });
    expect(parseBenchArgs(["--state-sizes", "5000,20000"])).toMatchObject({ stateSizes: [5000, 20000] });
    expect(parseBenchArgs(["--quick"])).toMatchObject({ stateSizes: [20000] });
  });
});

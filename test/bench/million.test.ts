/**
 * The benchmark's million-instance scenario (bench/src/million.ts), its pure parts: the flags, the capped rules of its
 * apply (1,000 changes), and the table and targets it prints from a run's figures. The scenario itself runs the built
 * CLI and a sandbox child for an hour; its figures are in docs/performance.md, "A million instances".
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/src/args.js";
import { gcSummary } from "../../bench/src/cli-run.js";
import { APPLY_CAP, cappedRules, millionTargets, renderMillion, type MillionRun } from "../../bench/src/million.js";
import { STATE_RULES_YAML } from "../../bench/src/state.js";
import { compileSources } from "../../src/rules/index.js";

const step = (what: string, requests: number, peakRssMb: number): MillionRun["steady"] => ({
  what,
  requests,
  peakRssMb,
  wallS: 1.5,
});

const RUN: MillionRun = {
  n: 1_000_000,
  sandbox: { startS: 25, peakRssMb: 1741 },
  firstSync: step("first sync (plan --state, writes it)", 130_000, 280),
  load: {
    stateShowS: 6.2,
    stateMb: 250,
    probe: { ms: 3900, indexMb: 30, heapMb: 5, buffersMb: 25, records: 130_000, lines: 800_000, authentic: true },
  },
  resume: {
    runs: [step("cut at 30 %", 39_000, 200), step("resumed", 95_000, 250)],
    total: 134_000,
    ratio: 134_000 / 130_000,
  },
  steady: step("steady", 14, 190),
  churned: 10_000,
  afterChurn: step("after 1 % churn", 1_400, 210),
  apply: { ...step("apply", 900, 220), applied: 1000 },
};

describe("bench: the million-instance scenario", () => {
  it("runs only with --million (or a size), resumes unless told not to", () => {
    expect(parseBenchArgs([])).not.toHaveProperty("million");
    expect(parseBenchArgs(["--million"])).toMatchObject({
      million: { n: 1_000_000, resume: true, stateless: false },
    });
    expect(parseBenchArgs(["--million-instances", "20_000", "--no-resume", "--stateless"])).toMatchObject({
      million: { n: 20_000, resume: false, stateless: true },
    });
    expect(() => parseBenchArgs(["--million-instances", "0"])).toThrow(/million-instances/);
  });

  it("applies 1,000 changes: the changing rules capped by max_changes_per_run, the rules still valid", () => {
    const yaml = cappedRules();
    expect(Object.values(APPLY_CAP).reduce((a, b) => a + b, 0)).toBe(1000);
    const loaded = compileSources([{ file: "capped.yaml", text: yaml }]);
    expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const caps = Object.fromEntries(
      (loaded.ruleSet?.rules ?? []).map((r) => [r.name, r.limits?.max_changes_per_run ?? null]),
    );
    expect(caps).toMatchObject(APPLY_CAP);
    expect(Object.values(caps).filter((c) => c !== null)).toHaveLength(2);
    expect(() => cappedRules(STATE_RULES_YAML.replace("s-approve-small-expenses", "other"))).toThrow(/no rule/);
  });

  it("judges each target from the figures and prints the table", () => {
    const judged = Object.fromEntries(millionTargets(RUN).map((t) => [t.text.replace(/^N = \d+: /, ""), t.met]));
    expect(judged).toEqual({
      "peak RSS of the first sync < 300 MB": true,
      "peak RSS of a steady run < 200 MB": true,
      "steady run, nothing changed ≤ 2 requests per workflow + 5 = 13": false,
      "loading the state < 5 s (`state show`, the whole process)": false,
      "loading the state < 5 s (the reader's pass, as a run opens it)": true,
      "first sync cut at 30/60/90 % and resumed ≤ 1.05× the requests of one uninterrupted": true,
    });
    const table = renderMillion(RUN);
    expect(table).toMatch(/^\| 1000000 \| apply: 1000 applied \| 900 \| 220 MB \| 1\.5 s \|$/m);
    expect(table).toMatch(/^\| 1000000 \| resumed first sync, total \| 134000 \(1\.031×\) \|/m);
    expect(table).toContain(
      "| N = 1000000: steady run, nothing changed ≤ 2 requests per workflow + 5 = 13 | 14 | **no** |",
    );
  });

  it("reads V8's --trace-gc lines: the most live after a full collection, when, and the most taken", () => {
    const trace = [
      "[1:0x1]      120 ms: Scavenge 10.1 (12.0) -> 8.0 (13.0) MB, pooled: 0 MB, 1.2 / 0.0 ms",
      "[1:0x1]     2500 ms: Mark-Compact 150.5 (170.2) -> 120.3 (171.0) MB, pooled: 0 MB, 80.1 / 0.0 ms",
      '{"plan": "not a trace line: 1 ms: Mark-Compact"}',
      "[1:0x1]     9000 ms: Mark-Compact (reduce) 190.0 (230.5) -> 95.0 (120.0) MB, 20.0 / 0.0 ms",
    ].join("\n");
    expect(gcSummary(trace)).toEqual({ maxLiveMb: 120.3, atS: 2.5, maxCommittedMb: 230.5, fullGcs: 2 });
    expect(gcSummary("no trace")).toBeUndefined();
    expect(parseBenchArgs(["--million", "--gc"])).toMatchObject({ million: { gc: true } });
  });
});

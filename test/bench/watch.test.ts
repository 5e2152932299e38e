/**
 * The benchmark's watch scenario runs for minutes in real time (npm run bench), so here only its arguments and its
 * judgement of the targets: the figures of a run in, the table and the met/not met verdicts out.
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/src/args.js";
import { renderWatch, watchTargets, type WatchRun } from "../../bench/src/watch.js";

const RUN: WatchRun = {
  n: 20_000,
  workflows: 4,
  firstCycleS: 2.1,
  firstCycleRequests: 32,
  firstApplied: 30,
  afterFirstRequests: 14,
  idleSeconds: 120,
  idleRequests: 36,
  idlePerMin: 18,
  eventsSeconds: 183,
  events: 7,
  reactionsS: [4, 5, 6, 6.3, 7, 8, 9.7],
  missed: 0,
  medianS: 6.3,
  p95S: 9.7,
  duplicates: 0,
  status429: 0,
  peakRssMb: 108,
  rssHalvesMb: [105, 108],
  cycles: 13,
  stopS: 0.1,
  exitCode: 0,
};

describe("bench: the watch scenario", () => {
  it("defaults to 20,000 and 100,000 (--quick: 20,000), and 0 skips it", () => {
    const full = parseBenchArgs([]);
    const quick = parseBenchArgs(["--quick"]);
    const none = parseBenchArgs(["--watch-sizes", "0"]);
    if (full === "help" || quick === "help" || none === "help") throw new Error("unexpected help");
    expect(full).toMatchObject({ watchSizes: [20_000, 100_000], watchIdleSeconds: 120, watchEventsSeconds: 180 });
    expect(quick).toMatchObject({ watchSizes: [20_000], watchIdleSeconds: 60, watchEventsSeconds: 90 });
    expect(none.watchSizes).toEqual([]);
    expect(() => parseBenchArgs(["--watch-idle", "5"])).toThrow(/--watch-idle/);
  });

  it("judges the targets of the issue and renders them", () => {
    expect(watchTargets([RUN]).every((t) => t.met)).toBe(true);
    const slow = watchTargets([
      {
        ...RUN,
        afterFirstRequests: 21,
        reactionsS: [4, 5, 6, 6.3, 7, 8, 46],
        idlePerMin: 25,
        p95S: 31,
        rssHalvesMb: [100, 150],
        duplicates: 1,
        exitCode: 1,
      },
    ]);
    expect(slow.filter((t) => !t.met).map((t) => t.text)).toEqual([
      "N = 20000: the 45 s after a first cycle that applied 30 changes ≤ 20 requests",
      "N = 20000: instances that come to match applied within 20 s (median), 45 s (max)",
      "N = 20000: idle requests a minute ≤ 20 (20 % of 100)",
      "N = 20000: reaction 95th percentile ≤ 30 s",
      "N = 20000: peak RSS < 200 MB, not growing",
      "N = 20000: nothing sent twice, no 429",
      "N = 20000: SIGTERM exits 0 within 10 s",
    ]);
    expect(renderWatch([RUN])).toMatch(
      /^\| 20000 \| 2\.1 s, 32 req, 30 applied \| 14 req \| 18\.0 \(36 in 120 s\) \| 7 \| 6\.3 s \| 9\.7 s \| 9\.7 s \| 108 MB \| 13 \|$/m,
    );
  });
});

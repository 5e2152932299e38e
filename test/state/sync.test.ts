/**
 * The first sync's progress and checkpoint policy (src/state/sync.ts), and the watcher's gauges of it: the words of
 * the progress line, when a checkpoint is due, and that one is written at a time however many reads race.
 */
import { describe, expect, it } from "vitest";
import { Checkpoints, syncLeftMs, syncLine } from "../../src/state/sync.js";
import { duration } from "../../src/render/progress/format.js";
import { WatchMetrics } from "../../src/watch/metrics.js";

describe("first sync progress", () => {
  it("says how far it got and how long the rest takes at the key's rate", () => {
    // 58,800 left at one request each, 100 a minute: 588 minutes
    const p = { workflows: 3, synced: 41_200, total: 100_000, requests: 41_200, readThisRun: 41_200 };
    expect(syncLine(p, 100, duration)).toBe(
      "synced 41,200 of ~100,000 instances, ~9 h 48 min left at 100 requests a minute",
    );
    expect(syncLine({ ...p, synced: 93_500 }, 100, duration)).toBe(
      "synced 93,500 of ~100,000 instances, ~65 min left at 100 requests a minute",
    );
    // the pace of this run: 1.2 requests per instance read (listings, field pages)
    expect(syncLeftMs({ ...p, synced: 99_000, requests: 1_200, readThisRun: 1_000 }, 100)).toBe(1_000 * 1.2 * 600);
    // no rate limit, no total: no time, no "of"
    expect(syncLine({ ...p, total: null }, 0, duration)).toBe("synced 41,200 instances");
  });

  it("a checkpoint is due after so many records or so long, one at a time", async () => {
    let t = 0;
    let written = 0;
    let release: (() => void) | undefined;
    const cp = new Checkpoints(
      { everyRecords: 3, everyMs: 1_000 },
      () => new Promise<void>((r) => ((release = r), written++)),
      () => t,
    );
    cp.counted(2);
    await cp.maybe(true);
    expect(written).toBe(0);
    cp.counted();
    await cp.maybe(false); // no sync going on: none
    expect(written).toBe(0);
    t = 5_000;
    const first = cp.maybe(true);
    expect(written).toBe(1);
    t = 5_000;
    await cp.maybe(true); // due by time, but one is being written: not a second at once
    expect(written).toBe(1);
    release?.();
    await first;
    t = 5_999;
    await cp.maybe(true);
    expect(written).toBe(1);
    t = 6_000;
    const timed = cp.maybe(true);
    expect(written).toBe(2);
    release?.();
    await timed;
  });

  it("the watcher's gauges say the sync going on, and none once it is complete", () => {
    const m = new WatchMetrics(10_000, 0, () => 0);
    const gauge = (name: string): number | undefined => m.families().find((f) => f.name === name)?.samples[0]?.value;
    expect(gauge("state_sync_instances")).toBe(0);
    m.syncProgress({ synced: 41_200, total: 100_000, leftS: 3_900 });
    expect([
      gauge("state_sync_instances"),
      gauge("state_sync_total_instances"),
      gauge("state_sync_seconds_left"),
    ]).toEqual([41_200, 100_000, 3_900]);
    m.syncProgress({ synced: 0, total: null, leftS: null });
    expect([
      gauge("state_sync_instances"),
      gauge("state_sync_total_instances"),
      gauge("state_sync_seconds_left"),
    ]).toEqual([0, 0, 0]);
  });
});

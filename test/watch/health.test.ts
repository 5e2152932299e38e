/**
 * docs/watch.md, "/metrics, /healthz and /readyz": what liveness and readiness say through a watcher's life, on a
 * clock the test moves. Liveness fails only when the process cannot work; readiness while anything is held or failing.
 */
import { describe, expect, it } from "vitest";
import { WatchMetrics } from "../../src/watch/metrics.js";
import { backoffMs } from "../../src/watch/settings.js";

function metrics(): { m: WatchMetrics; advance: (ms: number) => void } {
  let t = 1_000_000;
  const m = new WatchMetrics(5_000, t, () => t);
  return { m, advance: (ms) => void (t += ms) };
}

describe("liveness and readiness", () => {
  it("starting: alive, not ready; a held rule: alive, not ready, named; all applied: ready", () => {
    const { m, advance } = metrics();
    expect(m.health().status).toBe(200);
    expect(m.ready()).toEqual({ status: 503, text: "not ready: the first cycle has not finished yet" });
    m.cycle(
      "partial",
      undefined,
      new Map([["big-rule", 'rule "big-rule" matched 82 instances, above its limit max_instances: 50']]),
    );
    advance(60 * 60_000); // an hour of held cycles is still a live process
    m.cycle("partial", undefined, new Map([["big-rule", "over its limit"]]));
    expect(m.health().status).toBe(200);
    expect(m.ready()).toEqual({ status: 503, text: "not ready: 1 rule held back: big-rule (over its limit)" });
    m.cycle("idle");
    expect(m.ready().status).toBe(503); // an idle poll plans nothing: the rule is still held
    m.cycle("ok", undefined, new Map());
    expect(m.ready()).toEqual({ status: 200, text: "ready: every rule applied in the last cycle" });
  });

  it("the service failing: alive until the back-off reaches its cap, then 503; a good cycle makes it live and ready", () => {
    const { m } = metrics();
    m.cycle("ok", undefined, new Map());
    m.cycle("failed", "cannot reach the service");
    m.failing(false);
    expect(m.health().status).toBe(200);
    expect(m.ready().status).toBe(503);
    m.failing(true);
    expect(m.health()).toMatchObject({ status: 503 });
    expect(m.health().text).toMatch(/retrying at the longest back-off: cannot reach the service$/);
    m.cycle("ok", undefined, new Map());
    expect(m.health().status).toBe(200);
    expect(m.ready().status).toBe(200);
  });

  it("the state dir unusable: 503 at once, saying so", () => {
    const { m } = metrics();
    m.cycle("failed", "EACCES: permission denied, open '/state/watch/cycles.jsonl'");
    m.failing(false, "EACCES: permission denied, open '/state/watch/cycles.jsonl'");
    expect(m.health()).toEqual({
      status: 503,
      text: "the state dir is unusable: EACCES: permission denied, open '/state/watch/cycles.jsonl'",
    });
  });

  it("the back-off doubles per cycle in a row and stops at its cap", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(5_000, n))).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
    expect(backoffMs(1_000, 50, 4_000)).toBe(4_000);
  });

  it("flowrules_rules_held: one sample per held rule, none when none is held", () => {
    const { m } = metrics();
    m.cycle(
      "partial",
      undefined,
      new Map([
        ["b", "x"],
        ["a", "y"],
      ]),
    );
    const held = m.families().find((f) => f.name === "rules_held");
    expect(held?.samples).toEqual([
      { labels: { rule: "a" }, value: 1 },
      { labels: { rule: "b" }, value: 1 },
    ]);
    m.cycle("ok", undefined, new Map());
    expect(m.families().find((f) => f.name === "rules_held")?.samples).toEqual([]);
  });
});

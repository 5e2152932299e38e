/** People at work between runs (src/sandbox/people.ts, control.ts): what changes, that it shows over HTTP, determinism. */
import { afterEach, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { call, listAll, NOW, postJson, start } from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe("simulated people", () => {
  it("changes about churn × instances, bumps last_updated_time of each, and starts new instances", async () => {
    sb = await start({ instances: 1000 });
    const before = new Map(sb.store.list().map((i) => [i.id, i]));
    const result = sb.simulate({ seed: 3, churn: 0.05 });
    const total = Object.values(result.counts).reduce((a, b) => a + b, 0);
    expect(total).toBe(50);
    expect(result.started.length).toBe(result.counts.start);
    expect(result.started.length).toBeGreaterThan(0);
    for (const id of result.ids) {
      const now = sb.store.get(id);
      expect(now).toBeDefined();
      const was = before.get(id);
      if (!was) {
        expect(result.started).toContain(id);
        expect(sb.store.status(id)).toBe("running");
        expect(now?.startedTime).toBe(NOW.getTime());
      } else {
        expect(now?.lastUpdatedTime).not.toBeNull();
        expect(now?.lastUpdatedTime ?? 0).toBeGreaterThanOrEqual(NOW.getTime());
      }
    }
    // untouched instances stay as they were
    const untouched = [...before.keys()].filter((id) => !result.ids.includes(id));
    for (const id of untouched.slice(0, 200)) expect(sb.store.get(id)).toEqual(before.get(id));
  });

  it("is deterministic for one seed", async () => {
    sb = await start({ instances: 300 });
    const a = sb.simulate({ seed: 9, changes: 30 });
    const snapshot = sb.store.list();
    await sb.close();
    sb = await start({ instances: 300 });
    const b = sb.simulate({ seed: 9, changes: 30 });
    expect(b).toEqual(a);
    expect(sb.store.list()).toEqual(snapshot);
  });

  it("shows over HTTP: changed instances are listed by last_updated_time_after, new ones too", async () => {
    sb = await start({ instances: 400 });
    const answer = await postJson<{ ids: number[]; started: number[]; now: string }>(
      sb,
      "/../__sandbox/people",
      { seed: 4, changes: 40, advance: "PT10M" },
      "admin",
    );
    expect(answer.status).toBe(200);
    expect(answer.body.now).toBe(new Date(NOW.getTime() + 600_000).toISOString());
    const listed = new Set<number>();
    for (const w of [1042, 1043, 1044, 1045]) {
      for (const id of (await listAll(sb, w, `last_updated_time_after=${NOW.toISOString()}`)).ids) listed.add(id);
    }
    expect([...listed].sort((x, y) => x - y)).toEqual(answer.body.ids);
  });

  it("moves the clock on request and refuses nonsense in one clear answer", async () => {
    sb = await start({ instances: 10 });
    expect(sb.advanceClock("PT1H").toISOString()).toBe(new Date(NOW.getTime() + 3_600_000).toISOString());
    const clock = await call<{ now: string }>(sb, `${sb.origin}/__sandbox/clock`);
    expect(clock.body.now).toBe(new Date(NOW.getTime() + 3_600_000).toISOString());
    const bad = await postJson<{ detail: string }>(sb, "/../__sandbox/clock", { advance: "yesterday" });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/duration/);
    const badPeople = await postJson<{ detail: string }>(sb, "/../__sandbox/people", { churn: 3 });
    expect(badPeople.status).toBe(400);
    expect(badPeople.body.detail).toMatch(/churn/);
    expect(() => sb?.advanceClock(-5)).toThrow(/forward/);
  });
});

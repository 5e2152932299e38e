/**
 * A list a rule reads beside its selection is used by a partial plan only whole (docs/operating.md, "A partial
 * plan"), also when its question is another cut rule's own selection, whose listing may be held with instances left
 * out (their data that rule reads is not held yet).
 *
 * The case: `open-recently-started` excludes `vip` instances and reads no records, so it learns which of its
 * instances carry the tag (or the opt-out tag) from one list, `status=running&tags=no-automation,vip`. A new rule,
 * `tagged-amounts`, selects exactly that, and reads a field the previous state does not hold: its listing is left
 * with those instances out. Read as the exclusion list, it would let excluded instances into the report: rows no
 * complete plan has. Cut at each request of a steady run after a clock move, each rule's rows are the stateless
 * plan's (complete) or some of them (partial), and the report that reads the list stays cut with the reason.
 */
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { StateSettings } from "../../src/state/index.js";
import type { Plan } from "../../src/plan/types.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { cleanUp } from "../helpers/temp.js";
import { statefulPlan, statelessPlan, tempDir } from "./helpers.js";
import { partialRun } from "./partial-run.js";

const START = new Date("2026-06-15T12:00:00.000Z");

const BEFORE = `
version: 1
rules:
  - name: open-by-stage
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id] }
  - name: open-recently-started
    workflow: 1042
    select: { status: [running], started_time_after: -P400D }
    exclude: { tags: [vip] }
    actions:
      - report: { group_by: status, columns: [id, name] }
`;
const AFTER = `${BEFORE}
  - name: tagged-amounts
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running], tags: [no-automation, vip] }
    actions:
      - report: { group_by: status, columns: [id, fields.amount] }
`;

/**
 * The same with priority: `open-by-priority` groups by priority without reading records, from the lists
 * `priority=V` and `priority=H` of its selection; `recent-high-amounts`, new, selects exactly the second and reads a
 * field the previous state does not hold. Read as the priority list, its listing would group instances as Regular.
 */
const PRIORITY_BEFORE = `
version: 1
rules:
  - name: open-by-stage
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id] }
  - name: open-by-priority
    workflow: 1042
    select: { status: [running], started_time_after: -P400D }
    actions:
      - report: { group_by: priority, columns: [id, name] }
`;
const PRIORITY_AFTER = `${PRIORITY_BEFORE}
  - name: recent-high-amounts
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running], started_time_after: -P400D, priority: H }
    actions:
      - report: { group_by: status, columns: [id, fields.amount] }
`;

afterAll(cleanUp);

const rows = (plan: Plan, rule: string): string[] =>
  plan.reports
    .filter((r) => r.rule === rule)
    .flatMap((r) => r.groups.flatMap((g) => g.instance_ids.map((id) => `${g.key}/${id}`)))
    .sort();

/**
 * A steady run after a clock move, cut at each of its first requests: every rule's rows against the stateless plan's,
 * and how often `reader` stayed cut because a list it reads beside its selection was not whole.
 */
async function cutEach(beforeYaml: string, afterYaml: string, reader: string): Promise<number> {
  const before = await rulesFromYaml(beforeYaml);
  const after = await rulesFromYaml(afterYaml);
  const sb = await startSandbox({ port: 0, instances: 300, seed: 46, now: START });
  const first = await tempDir();
  try {
    const settings = (dir: string): StateSettings => ({ dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false });
    await statefulPlan(sb, before, START, settings(first.dir));
    sb.advanceClock("P1D");
    const now = sb.store.now();
    const stateless = await statelessPlan(sb, after, now);
    let guarded = 0;
    for (let cutAt = 1; cutAt <= 12; cutAt++) {
      const dir = await tempDir();
      try {
        await cp(first.dir, dir.dir, { recursive: true, filter: (f) => !f.endsWith(join("", "state.lock")) });
        const made = await partialRun(sb, after, now, settings(dir.dir), cutAt, true);
        if (!made) continue;
        const p = made.plan.partial;
        const cut = new Set(p?.rules_cut ?? []);
        const part = new Set((p?.rules_partial ?? []).map((r) => r.rule));
        for (const rule of after.rules.map((r) => r.name)) {
          const mine = rows(made.plan, rule);
          const full = rows(stateless.plan, rule);
          if (cut.has(rule)) expect(mine, `${rule} cut at ${cutAt}`).toEqual([]);
          else if (part.has(rule)) for (const r of mine) expect(full, `${rule} at ${cutAt}`).toContain(r);
          else expect(mine, `${rule} at ${cutAt}`).toEqual(full);
        }
        const reason = p?.cut_reasons?.find((r) => r.rule === reader)?.reason ?? "";
        if (/held only in part/.test(reason)) guarded++;
      } finally {
        await dir.remove();
      }
    }
    return guarded;
  } finally {
    await sb.close();
    await first.remove();
  }
}

describe("a list read beside a selection that is another cut rule's selection", () => {
  it("is used only whole: an exclusion list held with instances left out keeps its reader cut", async () => {
    // the exclusion matters here: the stateless report leaves out instances the list names
    const sb = await startSandbox({ port: 0, instances: 300, seed: 46, now: START });
    try {
      const excluding = await statelessPlan(sb, await rulesFromYaml(BEFORE), START);
      const unexcluded = await rulesFromYaml(BEFORE.replace("    exclude: { tags: [vip] }\n", ""));
      const all = await statelessPlan(sb, unexcluded, START);
      expect(rows(all.plan, "open-recently-started").length).toBeGreaterThan(
        rows(excluding.plan, "open-recently-started").length,
      );
    } finally {
      await sb.close();
    }
    expect(await cutEach(BEFORE, AFTER, "open-recently-started")).toBeGreaterThan(0);
  }, 60_000);

  it("is used only whole: a priority list held with instances left out keeps its reader cut", async () => {
    expect(await cutEach(PRIORITY_BEFORE, PRIORITY_AFTER, "open-by-priority")).toBeGreaterThan(0);
  }, 60_000);
});

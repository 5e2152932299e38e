/**
 * Issue 35, point 5: a listing that repeats an instance (a service quirk, or offset pages shifting under concurrent
 * inserts) never counts it twice. Against the sandbox's `repeat-items` quirk over HTTP (every instance list page
 * lists each item twice), the plan equals the faithful one — selected counts, changes, report rows and tag counts —
 * and each listing that repeated says so in one warning (docs/real-services.md).
 */
import { describe, expect, it } from "vitest";
import { planRuleSet } from "../../src/commands/plan.js";
import { listingWarning } from "../../src/engine/run-queries.js";
import type { Plan } from "../../src/plan/types.js";
import { loadRules } from "../../src/rules/index.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { captureIO, connection, writeRules } from "../apply/helpers.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const NOW = new Date("2026-03-02T09:00:00.000Z");

const RULES = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    select: { status: running, active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111 }
  - name: expenses-by-tag
    workflow: 1042
    select: { status: [running, completed] }
    actions:
      - report: { group_by: tags, columns: [id, name, status], title: Expense claims }
  - name: stop-onboardings
    workflow: 1043
    select: { status: running }
    when: $count(tags) > 0
    actions: [abort]
`;

async function planAgainst(quirks: string[]): Promise<{ plan: Plan; stderr: string }> {
  const sb = closeAfterAll(await startSandbox({ port: 0, instances: 300, seed: 35, now: NOW, quirks }));
  const loaded = await loadRules([await writeRules(await tempDir(), RULES)]);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
  const io = captureIO();
  const plan = await planRuleSet(loaded.ruleSet, connection(sb), io, { quiet: true, now: NOW });
  return { plan, stderr: io.err() };
}

describe("a listing that repeats its items", () => {
  it("is counted once: the same plan as the faithful service, and one warning per listing", async () => {
    const [faithful, repeated] = await Promise.all([planAgainst([]), planAgainst(["repeat-items"])]);
    expect(faithful.stderr).toBe("");
    expect(faithful.plan.changes.length).toBeGreaterThan(0);
    const selected = (p: Plan): unknown => p.rules.map((r) => [r.name, r.selected, r.matched]);
    expect(selected(repeated.plan)).toEqual(selected(faithful.plan));
    expect(repeated.plan.changes.map((c) => c.id)).toEqual(faithful.plan.changes.map((c) => c.id));
    const reports = (p: Plan): unknown =>
      p.reports.map((r) => [r.rule, r.groups.map((g) => [g.key, g.count, g.instance_ids]), r.rows.length]);
    expect(reports(repeated.plan)).toEqual(reports(faithful.plan));
    expect(repeated.plan.errors).toEqual([]);
    // one line per listing that repeated; each names the listing and the counts
    const lines = repeated.stderr.trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(
        /^warning: listing instances of workflow 104[23] \(.*\): the service listed (\d+) items more than once \((\d+) items for \1 instances\); each instance is planned once$/,
      );
    }
    expect(new Set(lines).size).toBe(lines.length);
  });

  it("says when a listing held more instances than its count, or repeats hid a shortfall", () => {
    const sel = {
      id: "s",
      processId: 1042,
      query: { status: ["running"] },
      source: { kind: "list" as const },
      why: "",
      users: [],
    };
    expect(listingWarning(sel, 163, 163, 163)).toBeUndefined();
    expect(listingWarning(sel, 170, 170, 163)).toBe(
      "listing instances of workflow 1042 (status=running): it held 170 instances, more than the 163 its count announced",
    );
    expect(listingWarning(sel, 163, 150, 163)).toBe(
      "listing instances of workflow 1042 (status=running): the service listed 13 items more than once (163 items for 150 instances); each instance is planned once; " +
        "only 150 of the 163 instances its count announced were listed; the others are planned on a later run",
    );
    // one is one: no `1 instances` (issue 36, point 9)
    expect(listingWarning(sel, 2, 1, 0)).toBe(
      "listing instances of workflow 1042 (status=running): the service listed 1 item more than once (2 items for 1 instance); each instance is planned once; it held 1 instance, more than the 0 its count announced",
    );
  });
});

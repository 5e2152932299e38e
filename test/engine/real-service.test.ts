/**
 * A real service answers within what the spec allows in ways the faithful sandbox does not (README.md "Real
 * services"). Under each sandbox quirk, over HTTP: the plan equals the faithful one by meaning, apply with resets
 * after commit mutates every planned step exactly once, a second plan plans nothing new — and a gateway's 404 on a
 * later page is an error, never a shorter plan.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planRuleSet } from "../../src/commands/plan.js";
import { writePlanFile } from "../../src/plan/write.js";
import type { Plan } from "../../src/plan/types.js";
import { sameValue } from "../../src/model/values.js";
import { loadRules } from "../../src/rules/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  connection,
  effectiveMutations,
  runApply,
  tempDir,
  writeRules,
} from "../apply/helpers.js";

const NOW = new Date("2026-03-02T09:00:00.000Z");
const SEED = 18;
const INSTANCES = 200;

/** Saves of every field type (number, checklist, radio, date) and broad field reads, next to the demo rules. */
const QUIRK_RULES = `
version: 1
rules:
  - name: score-access-reviews
    workflow: 1045
    fields:
      risk: { step: 20141, action: 50272 }
    select: { status: [running], active_step_id: 20141 }
    when: $not($exists(fields.risk)) or fields.risk < 50
    actions:
      - save_step:
          step: 20141
          inputs:
            - action: 50272
              value: { inputValue: 12.5 }
            - action: 50273
              value: { inputValue: { itemsChecked: ["MFA", "Expiry set"], itemsNotChecked: ["Least privilege"] } }
  - name: pick-access-system
    workflow: 1045
    select: { status: [running], active_step_id: 20140 }
    actions:
      - save_step:
          step: 20140
          inputs:
            - action: 50270
              value: { inputValue: { radioItemSelected: "Wiki" } }
  - name: date-orders
    workflow: 1044
    select: { status: [running], active_step_id: 20132 }
    actions:
      - save_step:
          step: 20132
          inputs:
            - action: 50265
              value: { date: "2026-01-05T10:00:00Z" }
  - name: amounts-by-status
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    when: $exists(fields.amount) and fields.amount >= 0 and $exists(fields.currency)
    actions:
      - report:
          title: Amounts by status
          group_by: status
          columns: [id, fields.amount, fields.currency]
`;

const DEMO = ["expenses.yaml", "purchases.yaml", "onboarding.yaml"].map((f) => join(process.cwd(), "rules", f));

const sandboxes: RunningSandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(quirks: string[] = []): Promise<RunningSandbox> {
  const sb = await startSandbox({ port: 0, instances: INSTANCES, seed: SEED, now: NOW, quirks });
  sandboxes.push(sb);
  return sb;
}

async function plan(sb: RunningSandbox, dir: string): Promise<Plan> {
  const extra = await writeRules(dir, QUIRK_RULES);
  const loaded = await loadRules([...DEMO, extra]);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
  return planRuleSet(loaded.ruleSet, connection(sb), captureIO(), { quiet: true, now: NOW });
}

/** Change ids, and for each its after-values and request inputs, compared by meaning with the faithful plan. */
function expectSamePlan(got: Plan, want: Plan): void {
  expect(got.errors).toEqual([]);
  expect(got.changes.map((c) => c.id)).toEqual(want.changes.map((c) => c.id));
  want.changes.forEach((w, i) => {
    const g = got.changes[i];
    if (!g) throw new Error(`missing ${w.id}`);
    expect(Object.keys(g.after).sort(), w.id).toEqual(Object.keys(w.after).sort());
    for (const [k, v] of Object.entries(w.after)) expect(sameValue(g.after[k], v), `${w.id} ${k}`).toBe(true);
    for (const [k, v] of Object.entries(w.before)) expect(sameValue(g.before[k], v), `${w.id} before ${k}`).toBe(true);
  });
  const reports = (p: Plan): unknown =>
    p.reports.map((r) => [r.rule, r.groups.map((g) => [g.key, g.count, g.instance_ids])]);
  expect(reports(got)).toEqual(reports(want));
  const amounts = (p: Plan): unknown[] => p.reports.flatMap((r) => r.rows.map((row) => row["fields.amount"]));
  const a = amounts(got),
    b = amounts(want);
  expect(a.length).toBe(b.length);
  a.forEach((x, i) => expect(sameValue(x, b[i], "number")).toBe(true));
}

let faithful: Plan;
beforeAll(async () => {
  faithful = await plan(await sandbox(), await tempDir());
  expect(faithful.errors).toEqual([]);
  const kinds = new Set(faithful.changes.map((c) => c.kind));
  expect(kinds).toEqual(new Set(["complete_step", "save_step", "abort"]));
  // every saved field type is planned at least once
  for (const rule of ["score-access-reviews", "pick-access-system", "date-orders", "note-large-purchases"]) {
    expect(
      faithful.changes.some((c) => c.rule === rule),
      rule,
    ).toBe(true);
  }
  expect(faithful.reports.find((r) => r.rule === "amounts-by-status")?.rows.length).toBeGreaterThan(2 * 20);
});

const TOLERATED = [
  "decimal-strings",
  "offset-micros",
  "radio-plain",
  "next-host",
  "https-next",
  "localhost-next",
  "no-count",
  "small-pages",
];

describe("under each quirk the service may show", () => {
  // repeat-items (each list item twice) rides along with all the others: counted once, the same plan (issue 35)
  for (const quirk of [...TOLERATED, [...TOLERATED, "repeat-items"].join(",")]) {
    it(`${quirk.includes(",") ? "all of them at once" : quirk}: same plan by meaning; apply with resets mutates each step once; a second plan has nothing new`, async () => {
      const sb = await sandbox(quirk.split(","));
      const dir = await tempDir();
      const first = await plan(sb, dir);
      expectSamePlan(first, faithful);

      const file = join(dir, "plan.json");
      await writePlanFile(file, first);
      sb.clearRequests();
      sb.setFaults({ resetRate: 0.3 });
      const io = captureIO();
      const code = await runApply(sb, dir, { paths: [file] }, io);
      sb.setFaults({ resetRate: 0 });
      expect(code, io.out() + io.err()).toBe(2);
      expect(sb.requests().some((r) => r.method === "POST" && r.reset === true)).toBe(true);
      const counts = effectiveMutations(sb);
      for (const c of first.changes) expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect([...counts.keys()].sort()).toEqual(first.changes.map(changeKey).sort());

      const second = await plan(sb, await tempDir());
      expect(second.errors).toEqual([]);
      expect(second.changes.map((c) => c.id)).toEqual([]);
    });
  }
});

describe("a gateway's HTML 404 on page 2 of a form-field listing", () => {
  it("fails the rules reading those pages with a one-line error naming the listing; never a shorter plan", async () => {
    const sb = await sandbox(["gateway-404-page2"]);
    const got = await plan(sb, await tempDir());
    const log = sb.requests().filter((r) => /\/actions\/\d+\/$/.test(r.path) && r.query.page === "2");
    expect(log.length).toBeGreaterThan(0);
    expect(log.every((r) => r.status === 404)).toBe(true);
    expect(got.errors.length).toBeGreaterThan(0);
    for (const e of got.errors) {
      expect(e.code).toBe("api");
      expect(e.message).toMatch(
        /^rule "[\w-]+": listing values of field \d+ \(step \d+, workflow \d+\), page 2: 404 Not Found: 404 Not Found$/,
      );
      expect(e.message.length).toBeLessThan(200);
    }
    const failed = new Set(got.errors.map((e) => e.rule));
    expect(failed.has("amounts-by-status")).toBe(true);
    // the failed rules show nothing; every other rule is planned exactly as on the faithful service
    expect(got.changes.filter((c) => failed.has(c.rule))).toEqual([]);
    expect(got.reports.filter((r) => failed.has(r.rule)).flatMap((r) => r.rows)).toEqual([]);
    expect(got.changes.map((c) => c.id)).toEqual(faithful.changes.filter((c) => !failed.has(c.rule)).map((c) => c.id));
  });
});

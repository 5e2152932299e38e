/**
 * `plan --compare` in one run is a shortcut for two separate stateless plans (the rules at the ref, the rules now):
 * over many random sandboxes and edits, the impact of the one run equals the impact those two plans imply, its plan
 * of the working tree's rules equals theirs, and it sends no more requests than the larger of them (sandbox log).
 * Also the pure diff (src/engine/impact.ts): identities, values by meaning, audit ↔ enforce.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { hasImpact, impactLine, planImpact, ruleImpact, type ImpactStatus } from "../../src/engine/impact.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { conflictContext, runCompare } from "../../src/engine/plan-compare.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { compileSources } from "../../src/rules/index.js";
import type { CompiledRule, RuleSet } from "../../src/rules/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

interface Edit {
  threshold: number;
  text: string;
  days: number;
  mode: "enforce" | "audit";
  /** the purchases rule exists in this version */
  note: boolean;
  /** the approve rule's rollout limit (`limits.max_changes_per_run`), 0 for none */
  rollout: number;
}

const approve = (e: Edit): string => `
  - name: approve
    workflow: 1042
    mode: ${e.mode}
${e.rollout > 0 ? `    limits: { max_changes_per_run: ${e.rollout} }\n` : ""}    fields:
      amount: { step: Manager approval, action: Amount }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < ${e.threshold}
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "${e.text}" }
            - action: 50231
              value: { date: "{{ $now() }}" }
`;
const abortOld = (e: Edit): string => `
  - name: abort-old
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P${e.days}D }
    actions: [abort]
`;
const NOTE = `
  - name: note-purchases
    workflow: 1044
    fields:
      quantity: { step: Request, action: Quantity }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity > 3
    actions:
      - save_step:
          step: 20131
          inputs:
            - action: 50264
              value: { inputValue: "check {{ fields.quantity }}" }
`;
const UNTOUCHED = `
  - name: abort-tiny-claims
    workflow: 1042
    fields:
      amount: { step: Manager approval, action: Amount }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 20
    actions: [abort]
  - name: untouched-report
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: status }
`;

function ruleSet(e: Edit): RuleSet {
  const text = `version: 1\nrules:${approve(e)}${abortOld(e)}${e.note ? NOTE : ""}${UNTOUCHED}`;
  const loaded = compileSources([{ file: "rules.yaml", text }]);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join("\n"));
  return loaded.ruleSet;
}

/** What changed between two versions, as the definitions would say (the test knows its own edits). */
function touchedBetween(a: Edit, b: Edit): Array<{ rule: string; status: ImpactStatus }> {
  const out: Array<{ rule: string; status: ImpactStatus }> = [];
  if (a.threshold !== b.threshold || a.text !== b.text || a.mode !== b.mode || a.rollout !== b.rollout)
    out.push({ rule: "approve", status: "edited" });
  if (a.days !== b.days) out.push({ rule: "abort-old", status: "edited" });
  if (!a.note && b.note) out.push({ rule: "note-purchases", status: "added" });
  if (a.note && !b.note) out.push({ rule: "note-purchases", status: "removed" });
  return out;
}

const edit = fc.record({
  threshold: fc.constantFrom(50, 100, 250, 1000),
  text: fc.constantFrom("Approved", "Approved by rule", "OK"),
  days: fc.constantFrom(10, 30, 90),
  mode: fc.constantFrom("enforce" as const, "audit" as const),
  note: fc.boolean(),
  rollout: fc.constantFrom(0, 0, 2, 5),
});

describe("plan --compare in one run equals two separate stateless plans", () => {
  let sb: RunningSandbox | undefined;
  afterAll(async () => {
    await sb?.close();
  });

  it("over random sandboxes and edits: the same impact, the same plan of the working tree's rules, no more requests", async () => {
    let impactful = 0;
    let conflicted = 0;
    let moved = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 100_000 }), edit, edit, async (seed, a, b) => {
        await sb?.close();
        sb = await startSandbox({ port: 0, instances: 80, seed, now: NOW });
        const server = sb;
        const client = createClient({ baseUrl: server.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
        try {
          const measured = async <T>(run: () => Promise<T>): Promise<{ value: T; requests: number }> => {
            server.clearRequests();
            const value = await run();
            return { value, requests: server.requests().length };
          };
          const before = await measured(() => runPlan({ client, ruleSet: ruleSet(a), now: NOW }));
          const after = await measured(() => runPlan({ client, ruleSet: ruleSet(b), now: NOW }));
          const touched = touchedBetween(a, b);
          const names = new Set(touched.map((t) => t.rule));
          const now = ruleSet(b);
          const old = ruleSet(a);
          const compare = await measured(() =>
            runCompare(
              {
                client,
                ruleSet: {
                  ...now,
                  rules: now.rules.filter(
                    (r) => names.has(r.name) && touched.find((t) => t.rule === r.name)?.status !== "removed",
                  ),
                },
                now: NOW,
              },
              {
                ref: "main",
                commit: "0".repeat(40),
                touched: [
                  ...touched.filter((t) => t.status !== "removed"),
                  ...touched.filter((t) => t.status === "removed"),
                ],
                before: old.rules.filter(
                  (r: CompiledRule) => names.has(r.name) && touched.find((t) => t.rule === r.name)?.status !== "added",
                ),
                unchanged: 2,
                untouched: now.rules.filter((r) => !names.has(r.name)),
                order: { now: now.rules.map((r) => r.name), atRef: old.rules.map((r) => r.name) },
              },
            ),
          );
          // errors as the two plans have them: every error of the compare run is one of theirs (the ref's naming the
          // version "(at main)"), and every error of theirs that names a touched rule is in the compare run.
          // abort-tiny-claims clashes with approve on every claim under 20, in both versions
          const atRef = (e: { message: string }): boolean => e.message.includes(" (at main)");
          const messages = (errors: Plan["errors"]): string[] => errors.map((e) => e.message);
          const nowErrors = messages(compare.value.errors.filter((e) => !atRef(e)));
          const refErrors = compare.value.errors.filter(atRef).map((e) => e.message.replaceAll(" (at main)", ""));
          const namesTouched = (m: string): boolean => touched.some((t) => m.includes(`"${t.rule}"`));
          expect(new Set(nowErrors)).toEqual(
            new Set(messages(after.value.errors).filter((m) => nowErrors.includes(m) || namesTouched(m))),
          );
          expect(new Set(refErrors)).toEqual(new Set(messages(before.value.errors).filter(namesTouched)));
          if (compare.value.errors.length > 0) conflicted++;
          const expected = planImpact(
            [...touched.filter((t) => t.status !== "removed"), ...touched.filter((t) => t.status === "removed")],
            before.value,
            after.value,
          );
          expect(compare.value.impact).toEqual(expected);
          // a change the working tree's rollout limit defers is still wanted: never counted as no longer planned
          for (const i of compare.value.impact) {
            const later = new Set(after.value.rules.find((r) => r.name === i.rule)?.deferred_ids ?? []);
            expect(i.removed.filter((c) => later.has(c.instance_id))).toEqual([]);
            if ((i.deferred?.length ?? 0) + (i.no_longer_deferred?.length ?? 0) > 0) moved++;
          }
          expect(compare.value.changes).toEqual(after.value.changes.filter((c) => names.has(c.rule)));
          // a rollout limit needs started times, which a separate plan may get free from records it chose to read
          // where the shared run reads field pages (docs/ci.md): then the bound is the two plans together
          if (a.rollout === 0 && b.rollout === 0)
            expect(compare.requests).toBeLessThanOrEqual(Math.max(before.requests, after.requests));
          else expect(compare.requests).toBeLessThanOrEqual(before.requests + after.requests);
          // untouched rules are not planned: nothing is listed for a run that touches nothing
          if (touched.length === 0) expect(compare.requests).toBe(0);
          if (hasImpact(compare.value.impact)) impactful++;
        } finally {
          await client.close();
        }
      }),
      {
        numRuns: 15,
        // one run for sure where a rollout limit is added: the working tree defers what the ref planned
        examples: [
          [
            7,
            { threshold: 1000, text: "OK", days: 30, mode: "enforce", note: false, rollout: 0 },
            { threshold: 1000, text: "OK", days: 30, mode: "enforce", note: false, rollout: 2 },
          ],
        ],
      },
    );
    // the edits are not vacuous: most runs plan something differently
    expect(impactful).toBeGreaterThan(5);
    // and the conflict with the untouched rule is judged in some of them, as the whole rule set's plans judge it
    expect(conflicted).toBeGreaterThan(0);
    // and a rollout limit moved changes between runs in some of them (the first example at least)
    expect(moved).toBeGreaterThan(0);
  });
});

describe("the impact of one rule (pure)", () => {
  const change = (
    instance: number,
    after: Record<string, unknown>,
    extra: Partial<PlannedChange> = {},
  ): PlannedChange => ({
    id: `r:complete_step:${instance}:20111`,
    rule: "r",
    instance_id: instance,
    instance_name: `claim ${instance}`,
    process_id: 1042,
    kind: "complete_step",
    step_id: 20111,
    request: { method: "POST", path: `/instances/${instance}/complete_step/`, body: {} },
    before: {},
    after,
    precondition: { status: "running", active_step_id: 20111 },
    ...extra,
  });

  it("new identities are added, lost ones removed, kept ones changed only where a value differs by meaning", () => {
    const old = [
      change(1, { "field 50230": "a", "field 50231": "2026-01-01T00:00:00Z" }),
      change(2, { "field 50230": "a" }),
      change(3, { "field 50230": 12.5 }),
    ];
    const now = [
      change(2, { "field 50230": "b" }),
      // the same instant and the same number in other notations write the same values
      change(3, { "field 50230": "12.50" }),
      change(4, { "field 50230": "b" }),
    ];
    const i = ruleImpact("r", "edited", old, now);
    expect(i.added.map((c) => c.instance_id)).toEqual([4]);
    expect(i.removed.map((c) => c.instance_id)).toEqual([1]);
    expect(i.changed).toEqual([
      {
        instance_id: 2,
        instance_name: "claim 2",
        kind: "complete_step",
        step_id: 20111,
        before: { "field 50230": "a" },
        after: { "field 50230": "b" },
      },
    ]);
    expect(impactLine(i)).toBe("r (edited): +1 newly affected, -1 no longer, 1 write other values");
    expect(hasImpact([i])).toBe(true);
    const dates = ruleImpact(
      "r",
      "edited",
      [change(5, { d: "2026-01-01T00:00:00Z" })],
      [change(5, { d: "2026-01-01T00:00:00.000+00:00" })],
    );
    expect(dates.changed).toEqual([]);
    expect(hasImpact([dates])).toBe(false);
  });

  it("another kind on the same instance is a removal and an addition; audit → enforce writes another mode", () => {
    const abort = change(1, { status: "aborted" }, { kind: "abort", id: "r:abort:1" });
    delete abort.step_id;
    const k = ruleImpact("r", "edited", [change(1, {})], [abort]);
    expect([k.added.length, k.removed.length, k.changed.length]).toEqual([1, 1, 0]);
    const m = ruleImpact("r", "edited", [change(1, { x: 1 }, { audit: true })], [change(1, { x: 1 })]);
    expect(m.changed.map((c) => [c.before, c.after])).toEqual([[{ mode: "audit" }, { mode: "enforce" }]]);
  });

  it("a change one version defers by its rollout limit is deferred or no longer deferred, not gone or new", () => {
    // the ref planned 1..4; the working tree plans 1, 2 and 6 and defers 3, 4 and 5 (5 was deferred at the ref)
    const old = [1, 2, 3, 4].map((n) => change(n, { x: 1 }));
    const now = [1, 2, 6].map((n) => change(n, { x: 1 }));
    const i = ruleImpact("r", "edited", old, now, { before: new Set([5, 6]), after: new Set([3, 4, 5]) });
    expect(i.removed).toEqual([]);
    expect(i.added).toEqual([]);
    expect(i.deferred?.map((c) => c.instance_id)).toEqual([3, 4]);
    expect(i.no_longer_deferred?.map((c) => c.instance_id)).toEqual([6]);
    expect(impactLine(i)).toBe(
      "r (edited): +0 newly affected, -0 no longer, 0 write other values, 2 deferred by the rollout limit, 1 no longer deferred",
    );
    // a move between runs is an impact (--detailed-exitcode 2); without a rollout the keys are absent
    expect(hasImpact([i])).toBe(true);
    const plain = ruleImpact("r", "edited", old, now);
    expect(Object.keys(plain)).toEqual(["rule", "status", "added", "removed", "changed"]);
    expect(plain.removed.map((c) => c.instance_id)).toEqual([3, 4]);
  });

  it("planImpact has an entry for each touched rule only, in the order given", () => {
    const plan = (changes: PlannedChange[]): Plan => ({
      format_version: 1,
      flowrules_version: "t",
      created_at: NOW.toISOString(),
      base_url: "x",
      rules_digest: "",
      rules: [],
      changes,
      reports: [],
      errors: [],
      summary: { reports: 0, errors: 0 },
    });
    const other = { ...change(9, {}), rule: "other", id: "other:complete_step:9:20111" };
    const out = planImpact(
      [
        { rule: "gone", status: "removed" },
        { rule: "r", status: "added" },
      ],
      plan([other, { ...change(7, {}), rule: "gone" }]),
      plan([change(8, {}), other]),
    );
    expect(out.map((i) => [i.rule, i.status, i.added.length, i.removed.length])).toEqual([
      ["gone", "removed", 0, 1],
      ["r", "added", 1, 0],
    ]);
  });
});

describe("the untouched rules a touched rule may clash with", () => {
  const rules = (text: string): CompiledRule[] => {
    const loaded = compileSources([{ file: "r.yaml", text: `version: 1\nrules:${text}` }]);
    if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
    return loaded.ruleSet.rules;
  };
  const rule = (name: string, workflow: string, action: string): string =>
    `\n  - name: ${name}\n    workflow: ${workflow}\n    select: { status: [running] }\n    actions: [ ${action} ]\n`;
  const untouched = rules(
    rule("abort-1042", "1042", "abort") +
      rule("report-1042", "1042", "{ report: { group_by: status } }") +
      rule("abort-1043", "1043", "abort") +
      rule("abort-named", "{ name: Employee onboarding }", "abort"),
  );
  const names = (list: CompiledRule[]): string[] => list.map((r) => r.name);

  it("mutating rules of the workflows touched mutating rules act on, and those whose workflow is named", () => {
    expect(names(conflictContext(untouched, rules(rule("t", "1042", "abort"))))).toEqual(["abort-1042", "abort-named"]);
    expect(names(conflictContext(untouched, rules(rule("t", "{ name: Expense claim }", "abort"))))).toEqual([
      "abort-1042",
      "abort-1043",
      "abort-named",
    ]);
  });

  it("none for a touched rule that only reports", () => {
    expect(conflictContext(untouched, rules(rule("t", "1042", "{ report: { group_by: status } }")))).toEqual([]);
  });
});

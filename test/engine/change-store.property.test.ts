/**
 * The plan assembled from changes held compactly (src/engine/change-store.ts: text in a byte store that goes to a
 * temporary file past a threshold, keys in typed arrays) is the plan assembled from the same changes as objects in
 * plain arrays (test/helpers/reference-assemble.ts, the assembly as it was): over many random rule sets with several
 * mutating rules on the same instances (conflicts), audit mode, rollout and instance limits, names and aliases, and
 * thresholds from "a file from the first byte" to "never a file".
 */
import { describe, expect, it } from "vitest";
import { planFromInstances, type PureRuleInput } from "../../src/engine/plan-offline.js";
import { evaluateInstance, type InstanceOutcome } from "../../src/engine/evaluate-instance.js";
import { planBindings } from "../../src/engine/context.js";
import { newRuleResult } from "../../src/engine/assemble.js";
import { ReportEntries } from "../../src/actions/index.js";
import type { NameSource } from "../../src/engine/names.js";
import { compileSources } from "../../src/rules/index.js";
import { Prng } from "../../src/sandbox/prng.js";
import { planFileText } from "../../src/plan/write.js";
import { VERSION } from "../../src/model/version.js";
import { referencePlan, type ReferenceResult } from "../helpers/reference-assemble.js";
import { instance } from "../helpers/instances.js";
import { withSmallMappedBuffersAsync } from "../helpers/mapped-sizes.js";
import { changeCounts, countsKnown, type ChangeCounts } from "../../src/plan/change-counts.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
const STEPS = [20111, 20112];

function randomRules(rnd: Prng): string {
  const out = ["version: 1", "rules:"];
  const count = rnd.int(2, 6);
  for (let r = 0; r < count; r++) {
    const actions: string[] = [];
    const kinds = rnd.int(1, 3);
    for (let a = 0; a < kinds; a++) {
      const step = rnd.pick(STEPS);
      const input = rnd.chance(0.5)
        ? `{ action: 50230, value: { inputValue: "r${r} {{ fields.amount }}" } }`
        : `{ action: 50231, value: { date: "{{ $now() }}" } }`;
      actions.push(
        rnd.weighted([
          ["abort", 2],
          [`{ complete_step: { step: ${step}, inputs: [ ${input} ] } }`, 3],
          [`{ save_step: { step: ${step}, inputs: [ ${input} ] } }`, 3],
          [`{ report: { group_by: priority, columns: [id, name, fields.amount] } }`, 1],
        ] as const),
      );
    }
    const distinct = [...new Set(actions)];
    // an instance's changes go together: a rollout limit below them is refused when the rules load
    const perInstance = distinct.filter((a) => !a.includes("report")).length;
    const limits: string[] = [];
    if (rnd.chance(0.3)) limits.push(`max_changes_per_run: ${rnd.int(Math.max(1, perInstance), 12)}`);
    if (rnd.chance(0.15)) limits.push(`max_instances: ${rnd.int(1, 30)}`);
    out.push(
      `  - name: rule-${r}`,
      `    workflow: 1042`,
      // an alias for a field the steps write too: before and after show it by alias
      `    fields: { amount: { step: 20111, action: 50222 }, note: { step: ${rnd.pick(STEPS)}, action: 50230 } }`,
      `    select: { status: [running] }`,
      `    when: instance.id % ${rnd.int(1, 4)} = 0 or fields.amount < ${rnd.int(0, 120)}`,
      `    actions: [ ${distinct.join(", ")} ]`,
      ...(rnd.chance(0.3) ? ["    mode: audit"] : []),
      ...(limits.length > 0 ? [`    limits: { ${limits.join(", ")} }`] : []),
    );
  }
  return `${out.join("\n")}\n`;
}

function randomInputs(rnd: Prng, yaml: string): PureRuleInput[] {
  const compiled = compileSources([{ file: "rules.yaml", text: yaml }]);
  if (!compiled.ruleSet) throw new Error(compiled.diagnostics.map((d) => d.message).join("\n"));
  const pool = rnd.int(3, 60);
  const started = ["2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"];
  return compiled.ruleSet.rules.map((rule) => {
    const ids = [...new Set(Array.from({ length: rnd.int(0, pool) }, () => rnd.int(1, pool * 3)))];
    return {
      rule,
      workflowId: 1042,
      instances: ids.map((id) =>
        instance({
          id,
          status: rnd.chance(0.1) ? "completed" : "running",
          values: { "20111:50222": { inputValue: rnd.int(0, 150) } },
          record: {
            active_step_ids: STEPS.filter(() => rnd.chance(0.7)),
            // ties, unknown starts and distinct ones: the rollout order decides by each
            ...(rnd.chance(0.8) ? { started_time: rnd.pick(started) } : {}),
            last_updated_time: "2026-10-01T00:00:00.000Z",
          },
        }),
      ),
    };
  });
}

const NAMES = new Map<number, NameSource[]>([
  [
    1042,
    [
      {
        name: "Expense claim",
        steps: new Map([[20111, "Manager approval"]]),
        fields: new Map([
          [50222, "Amount"],
          [50230, "Note"],
        ]),
      },
    ],
  ],
]);

/** The reference: the same outcomes, collected into plain arrays and assembled as before. */
async function reference(inputs: PureRuleInput[]): Promise<ReturnType<typeof referencePlan>> {
  const bindings = planBindings(NOW);
  const results: ReferenceResult[] = [];
  for (const input of inputs) {
    const { changes: _store, ...rest } = newRuleResult(input.rule, input.workflowId);
    const result: ReferenceResult = { ...rest, changes: [] };
    results.push(result);
    for (const data of input.instances) {
      const o: InstanceOutcome = await evaluateInstance(input.rule, data, NOW.toISOString(), bindings);
      result.selected++;
      if (o.error) {
        result.errors.push(o.error);
        continue;
      }
      if (!o.matched) continue;
      result.matched++;
      result.skipped += o.skipped.length;
      for (const reason of o.skipReasons) result.skipReasons.set(reason, (result.skipReasons.get(reason) ?? 0) + 1);
      for (const c of o.changes) result.changes.push(c);
      if (o.changes.length > 0 && o.started_time !== undefined) result.startedTimes.set(o.instance_id, o.started_time);
      for (const { actionIndex, entry } of o.reportEntries) {
        let list = result.reportEntries.get(actionIndex);
        if (!list) result.reportEntries.set(actionIndex, (list = new ReportEntries()));
        list.add(entry);
      }
    }
  }
  return referencePlan(results, { createdAt: NOW, baseUrl: "", rulesDigest: "", version: VERSION, names: NAMES });
}

/** Counts as plain data, the order of their maps kept. */
function countsShown(c: ChangeCounts): unknown {
  return { total: c.total, audit: c.audit, byKind: [...c.byKind], byRule: [...c.byRule] };
}

/** The plan of a random rule set over random instances, against the plan of the plain arrays. */
async function samePlan(seed: number): Promise<void> {
  const rnd = new Prng(seed);
  const yaml = randomRules(rnd);
  const inputs = randomInputs(rnd, yaml);
  // from "a file from the first byte" to "never a file"
  const threshold = rnd.pick([0, 1, 700, 5000, 1e9]);
  const plan = await planFromInstances(inputs, NOW, { names: NAMES, spill: { threshold } });
  const expected = await reference(inputs);
  expect(JSON.parse(JSON.stringify(plan)), yaml).toEqual(JSON.parse(JSON.stringify(expected)));
  expect(planFileText(plan)).toBe(planFileText(expected));
  // the counts the assembly hands over without making a change are those of the changes as objects, in order
  expect(countsKnown(plan.changes)).toBeDefined();
  expect(countsShown(changeCounts(plan.changes))).toEqual(countsShown(changeCounts([...expected.changes])));
  // read twice, in any order: the same changes
  const backwards = [...plan.changes.keys()].reverse().map((i) => plan.changes[i]);
  expect(backwards.reverse()).toEqual([...plan.changes]);
}

describe("planned changes held compactly", () => {
  const seeds = Array.from({ length: 150 }, (_, i) => i + 1);
  it.each(seeds)("seed %i: the plan of the plain arrays, byte for byte", (seed) => samePlan(seed));

  // the store's columns and bytes across the edges of their mapped buffers (test/helpers/mapped-sizes.ts)
  it.each(seeds.slice(0, 20))("seed %i, small mapped buffers: the same plan", (seed) =>
    withSmallMappedBuffersAsync(seed, () => samePlan(seed)),
  );

  it("the random rule sets do what they are for: conflicts, audit, deferred, limits, names, a file", async () => {
    const seen = { conflict: 0, audit: 0, deferred: 0, limit: 0, aliases: 0, changes: 0 };
    for (const seed of seeds) {
      const rnd = new Prng(seed);
      const inputs = randomInputs(rnd, randomRules(rnd));
      const plan = await reference(inputs);
      seen.conflict += plan.errors.filter((e) => e.code === "conflict").length;
      seen.limit += plan.errors.filter((e) => e.code === "limit").length;
      seen.audit += plan.changes.filter((c) => c.audit === true).length;
      seen.deferred += plan.rules.reduce((n, r) => n + (r.deferred ?? 0), 0);
      seen.aliases += plan.rules.filter((r) => r.fields !== undefined).length;
      seen.changes += plan.changes.length;
    }
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(20);
  });
});

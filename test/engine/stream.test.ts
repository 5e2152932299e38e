/**
 * Streaming a listed selection with the selections filtered from it and every rule over them (src/engine/stream-group.ts),
 * and dropping field values and records once no later rule reads them, are shortcuts: over many random rule sets and tenants, the plan and the very requests sent are
 * those of listing every selection whole first and keeping every value (`stream: false`); so are a priority list
 * kept as its ids alone.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { Prng } from "../../src/sandbox/prng.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { TAG_POOL } from "../../src/sandbox/catalog.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { planTargets } from "../../src/engine/plan-targets.js";
import { planQueries } from "../../src/engine/query-plan.js";
import { streamGroups } from "../../src/engine/stream-groups.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

/** Per workflow: its steps and the fields a rule may read, with a condition on each. */
const WORKFLOWS: Record<number, { steps: number[]; fields: Array<[number, number, string]> }> = {
  1042: {
    steps: [20110, 20111, 20112],
    fields: [
      [20111, 50222, "> 100"],
      [20111, 50223, '= "EUR"'],
      [20110, 50221, '= "Travel"'],
      [20110, 50220, '= "Team lunch"'],
    ],
  },
  1043: { steps: [20120, 20121, 20122], fields: [[20120, 50251, '= "Permanent"']] },
  1044: {
    steps: [20130, 20131, 20132],
    fields: [
      [20130, 50261, "> 10"],
      [20130, 50262, "< 500"],
    ],
  },
  1045: { steps: [20140, 20141, 20142], fields: [[20141, 50272, "> 5"]] },
};

/** The selections a rule may ask: status alone narrows from a wider status (client-side), others are listed. */
function randomSelect(rnd: Prng, wf: { steps: number[] }): string {
  return rnd.pick([
    "{}",
    "{}",
    "{ status: [running] }",
    "{ status: [running] }",
    "{ status: [running, completed] }",
    "{ status: [completed] }",
    "{ status: [aborted, completed] }",
    `{ status: [running], active_step_id: ${rnd.pick(wf.steps)} }`,
    "{ status: [running], priority: H }",
    `{ tags: [${rnd.pick(TAG_POOL)}] }`,
    "{ status: running, deadline_before: now }",
  ]);
}

function randomRules(rnd: Prng): string {
  const n = rnd.int(1, 8);
  // a rule set where no rule reads records, or where every rule does, streams more of its selections together
  // ("family": the selections of one listing, shared or narrowed by status, none reading records)
  const style = rnd.pick(["mixed", "fields", "records", "family"]);
  const lines = ["version: 1", "rules:"];
  const made: Array<{ id: number; select: string }> = [];
  for (let r = 0; r < n; r++) {
    // the first rule selects every expense claim (more than 500: field pages are asked while it is listed)
    const first = r === 0;
    // now and then a rule over another's very selection: a selection several rules share
    const again = !first && rnd.chance(0.3) ? rnd.pick(made) : undefined;
    const id = again?.id ?? (first ? 1042 : rnd.pick([1042, 1042, 1042, 1044, 1043, 1045]));
    const wf = WORKFLOWS[id]!;
    const select =
      again?.select ??
      (first
        ? "{}"
        : style === "family"
          ? rnd.pick(["{}", "{ status: [running] }", "{ status: [running, completed] }", "{ status: [completed] }"])
          : randomSelect(rnd, wf));
    made.push({ id, select });
    const fields = wf.fields.filter((_, i) => (first && i === 0) || rnd.chance(0.5));
    const conds = fields.map(([, , cond], i) => (rnd.chance(0.5) ? `fields.f${i} ${cond}` : `fields.f${i} != null`));
    // a condition on the record: its reads cost a request per instance, so only now and then
    const onRecord = ['$contains(instance.name, "a")', 'instance.priority = "H"', '"vip" in tags'];
    const extra =
      style === "fields" || style === "family"
        ? ""
        : style === "records"
          ? rnd.pick(onRecord)
          : rnd.pick(["", "", "", "", ...onRecord]);
    if (extra) conds.push(extra);
    const when = conds.length > 0 ? `    when: '${conds.join(rnd.chance(0.5) ? " and " : " or ")}'` : undefined;
    const action = rnd.pick([
      "[abort]",
      "[ { report: { title: R, group_by: status, columns: [id, name] } } ]",
      // a report by priority: priority lists may answer it instead of record reads
      ...(style !== "family" && rnd.chance(0.3)
        ? ["[ { report: { title: P, group_by: priority, columns: [id, name] } } ]"]
        : []),
      // a step the selection does not guarantee active is probed (a filtered list): not in a "fields" rule set
      ...(id === 1042 && (style === "mixed" || style === "records" || select.includes("20111"))
        ? [`[ { complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: ok } } ] } } ]`]
        : []),
    ]);
    lines.push(`  - name: r${r}`, `    workflow: ${id}`, `    select: ${select}`);
    if (fields.length > 0) {
      lines.push("    fields:");
      fields.forEach(([s, a], i) => lines.push(`      f${i}: { step: ${s}, action: ${a} }`));
    }
    if (when) lines.push(when);
    if (rnd.chance(0.2)) lines.push(`    exclude: { tags: [${rnd.pick(TAG_POOL)}] }`);
    // a rollout limit reads started times, from records kept by other rules
    if (rnd.chance(0.1)) lines.push(`    limits: { max_changes_per_run: ${rnd.int(1, 20)} }`);
    lines.push(`    actions: ${action}`);
  }
  return lines.join("\n") + "\n";
}

/** What the rule set gives the streaming to do: groups of several rules, or with filtered selections. */
async function groupsOf(s: RunningSandbox, rs: RuleSet): Promise<{ shared: number; narrowed: number }> {
  const client = createClient({ baseUrl: s.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  try {
    const { planned, inputs } = await planTargets({
      client,
      ruleSet: rs,
      now: NOW,
      catalog: undefined,
      warn: () => undefined,
    });
    const groups = streamGroups(planned, planQueries(inputs));
    return {
      shared: groups.filter((g) => g.rules.length > 1).length,
      narrowed: groups.filter((g) => g.selections.length > 1).length,
    };
  } finally {
    await client.close();
  }
}

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** Rules whose priority came from the lists priority=V and priority=H (their ids kept, not their elements). */
let priorityLists = 0;

async function planWith(s: RunningSandbox, rs: RuleSet, stream: boolean, optOutTag?: string) {
  s.clearRequests();
  const client = createClient({ baseUrl: s.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  let plan: Plan;
  try {
    plan = await runPlan({
      client,
      ruleSet: rs,
      now: NOW,
      stream,
      ...(optOutTag ? { optOutTag } : {}),
      onRequestChoice: (c) => {
        if (c.choice === "priority lists") priorityLists += 1;
      },
    });
  } finally {
    await client.close();
  }
  const res = await fetch(`${s.origin}/__sandbox/requests`);
  const log = (await res.json()) as Array<{ method: string; path: string; query: Record<string, unknown> }>;
  const requests = log.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.query)}`).sort();
  return { plan, requests };
}

describe("streamed selections and dropped values plan as whole listings do", () => {
  const seeds = Array.from({ length: 30 }, (_, i) => i + 1);
  const coverage = { shared: 0, narrowed: 0, seeds: 0 };
  afterAll(() => {
    // the seeds streamed groups of several rules and groups with filtered selections, not only single rules, and
    // took priorities from priority lists
    if (coverage.seeds === seeds.length) {
      expect(coverage.shared).toBeGreaterThanOrEqual(5);
      expect(coverage.narrowed).toBeGreaterThanOrEqual(5);
      expect(priorityLists).toBeGreaterThanOrEqual(5);
    }
  });
  it.each(seeds)("seed %i: the same plan and the same requests", async (seed) => {
    const rnd = new Prng(seed * 7919);
    sb = await startSandbox({
      port: 0,
      instances: rnd.int(1400, 2000),
      seed,
      now: NOW,
      // several pages of a few elements each, repeated elements: field pages then fall across listing pages
      quirks: rnd.pick([[], [], ["small-pages"], ["repeat-items"]]),
    });
    const yaml = randomRules(rnd);
    const rs = await rulesFromYaml(yaml);
    const optOut = rnd.chance(0.3) ? rnd.pick(TAG_POOL) : undefined;
    const g = await groupsOf(sb, rs);
    coverage.shared += g.shared;
    coverage.narrowed += g.narrowed;
    coverage.seeds += 1;
    const whole = await planWith(sb, rs, false, optOut);
    const streamed = await planWith(sb, rs, true, optOut);
    expect(streamed.plan, yaml).toEqual(whole.plan);
    expect(streamed.requests, yaml).toEqual(whole.requests);
    // the seed planned something: the comparison is not between two empty plans
    expect(
      whole.plan.rules.reduce((k, r) => k + r.selected, 0),
      yaml,
    ).toBeGreaterThan(0);
  });
});

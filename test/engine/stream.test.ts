/**
 * Streaming a selection that one rule alone uses (src/engine/stream-rule.ts) and dropping field values once no later
 * rule reads them are shortcuts: over many random rule sets and tenants, the plan and the very requests sent are
 * those of listing every selection whole first and keeping every value (`stream: false`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { Prng } from "../../src/sandbox/prng.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { TAG_POOL } from "../../src/sandbox/catalog.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { rulesFromYaml } from "../helpers/rules.js";

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

function randomRules(rnd: Prng): string {
  const n = rnd.int(1, 6);
  const lines = ["version: 1", "rules:"];
  for (let r = 0; r < n; r++) {
    // the first rule selects every expense claim (more than 500: field pages are asked while it is listed)
    const first = r === 0;
    const id = first ? 1042 : rnd.pick([1042, 1042, 1044, 1043, 1045]);
    const wf = WORKFLOWS[id]!;
    const step = rnd.pick(wf.steps);
    const select = first
      ? "{}"
      : rnd.pick([
          "{}",
          "{ status: [running] }",
          "{ status: [running, completed] }",
          `{ status: [running], active_step_id: ${step} }`,
          "{ status: [running], priority: H }",
          `{ tags: [${rnd.pick(TAG_POOL)}] }`,
          "{ status: running, deadline_before: now }",
        ]);
    const fields = wf.fields.filter((_, i) => (first && i === 0) || rnd.chance(0.6));
    const conds = fields.map(([, , cond], i) => (rnd.chance(0.5) ? `fields.f${i} ${cond}` : `fields.f${i} != null`));
    // a condition on the record: its reads cost a request per instance, so only now and then
    const extra = rnd.pick(["", "", "", '$contains(instance.name, "a")', 'instance.priority = "H"', '"vip" in tags']);
    if (extra) conds.push(extra);
    const when = conds.length > 0 ? `    when: '${conds.join(rnd.chance(0.5) ? " and " : " or ")}'` : undefined;
    const action = rnd.pick([
      "[abort]",
      "[ { report: { title: R, group_by: status, columns: [id, name] } } ]",
      ...(id === 1042
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
    lines.push(`    actions: ${action}`);
  }
  return lines.join("\n") + "\n";
}

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function planWith(s: RunningSandbox, rs: RuleSet, stream: boolean, optOutTag?: string) {
  s.clearRequests();
  const client = createClient({ baseUrl: s.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  let plan: Plan;
  try {
    plan = await runPlan({ client, ruleSet: rs, now: NOW, stream, ...(optOutTag ? { optOutTag } : {}) });
  } finally {
    await client.close();
  }
  const res = await fetch(`${s.origin}/__sandbox/requests`);
  const log = (await res.json()) as Array<{ method: string; path: string; query: Record<string, unknown> }>;
  const requests = log.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.query)}`).sort();
  return { plan, requests };
}

describe("streamed selections and dropped values plan as whole listings do", () => {
  const seeds = Array.from({ length: 10 }, (_, i) => i + 1);
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

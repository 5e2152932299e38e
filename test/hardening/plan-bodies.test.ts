/**
 * Issue 28, point 8: what a plan shows (`after`) is what apply sends. A request body edited after planning, or an
 * `after` edited to hide it, is refused before any request even with a recomputed digest; plans as the planner
 * writes them (aliased fields, dates, several inputs) pass.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPlannedChange } from "../../src/actions/index.js";
import { UserError } from "../../src/model/errors.js";
import { planDigest } from "../../src/plan/digest.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, runApply, tempDir } from "../apply/helpers.js";

const RUNS = Number(process.env.FLOWRULES_FC_RUNS ?? 60);

let sb: RunningSandbox;
let dir: string;
let plan: Plan;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 288 });
  dir = await tempDir();
  // fields named by alias and by id, a template and a date: every shape of `after` the planner makes
  const rules = `version: 1
rules:
  - name: approve
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      comment: { step: 20111, action: 50230 }
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "Approved {{ fields.amount }}" }
            - action: 50231
              value: { date: "{{ $now() }}" }
${MIXED_RULES.slice(MIXED_RULES.indexOf("  - name: note-purchases"))}`;
  plan = (await makePlan(sb, dir, rules)).plan;
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

function issues(c: PlannedChange): string[] {
  const out: string[] = [];
  checkPlannedChange(c, (path, message) => out.push(`${path.join(".")}: ${message}`));
  return out;
}

const steps = (): PlannedChange[] => plan.changes.filter((c) => c.kind !== "abort");

let n = 0;
async function refusedBeforeAnyRequest(edited: Plan): Promise<string> {
  (edited as Plan & { digest?: string }).digest = planDigest(edited);
  const file = join(dir, `edited-${++n}.json`);
  await writeFile(file, JSON.stringify(edited));
  sb.clearRequests();
  const err = await runApply(sb, dir, { paths: [file] }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UserError);
  expect(sb.requests()).toEqual([]);
  return (err as Error).message;
}

describe("plan bodies tied to what is shown", () => {
  it("every change the planner writes passes: aliases, ids, templates, dates, several inputs", () => {
    expect(steps().length).toBeGreaterThan(5);
    expect(steps().some((c) => Object.keys(c.after).some((k) => k.startsWith("fields.")))).toBe(true);
    expect(steps().some((c) => Object.keys(c.after).some((k) => /^action \d+$/.test(k)))).toBe(true);
    for (const c of plan.changes) expect(issues(c), c.id).toEqual([]);
  });

  it("a body value edited with the digest recomputed is refused, naming the change", async () => {
    const edited = JSON.parse(JSON.stringify(plan)) as Plan;
    const c = edited.changes.find((x) => x.kind === "complete_step") as PlannedChange;
    const body = c.request.body as { actions: Array<{ input_object: unknown }> };
    (body.actions[0] as { input_object: unknown }).input_object = { inputValue: "Rejected by someone else" };
    expect(await refusedBeforeAnyRequest(edited)).toMatch(/not a valid plan at \$\.changes\[\d+\]\.(after|request)/);
  });

  it("an input added to the body, or removed from it, is refused", async () => {
    const added = JSON.parse(JSON.stringify(plan)) as Plan;
    const a = added.changes.find((x) => x.kind === "save_step") as PlannedChange;
    (a.request.body as { actions: unknown[] }).actions.push({ action_id: 50222, input_object: { inputValue: 0 } });
    await refusedBeforeAnyRequest(added);
    const removed = JSON.parse(JSON.stringify(plan)) as Plan;
    const r = removed.changes.find((x) => x.kind === "complete_step") as PlannedChange;
    (r.request.body as { actions: unknown[] }).actions.pop();
    await refusedBeforeAnyRequest(removed);
  });

  it("any random edit of a sent value or a shown value is found (property)", () => {
    const targets = steps();
    fc.assert(
      fc.property(fc.nat(), fc.boolean(), fc.jsonValue(), (pick, inBody, replacement) => {
        const c = JSON.parse(JSON.stringify(targets[pick % targets.length])) as PlannedChange;
        const body = c.request.body as { actions: Array<{ action_id: number; input_object: unknown }> };
        let before: unknown;
        if (inBody && body.actions.length > 0) {
          const a = body.actions[pick % body.actions.length] as { input_object: unknown };
          before = a.input_object;
          a.input_object = { inputValue: replacement };
        } else {
          const keys = Object.keys(c.after);
          const key = keys[pick % keys.length] as string;
          before = c.after[key];
          c.after[key] = replacement;
        }
        // an edit that changes nothing is no edit
        fc.pre(JSON.stringify(before) !== JSON.stringify(inBody ? { inputValue: replacement } : replacement));
        fc.pre(!(inBody && replacement === null && JSON.stringify(before) === '{"inputValue":null}'));
        return issues(c).length > 0;
      }),
      { numRuns: RUNS },
    );
  });
});

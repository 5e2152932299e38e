/**
 * `changes`: exactly the planned changes, matched by instance, kind and step; then, when the expectation lists
 * `inputs`, those inputs with those values (inputs it does not state are not compared, and noted). A missing change says why the instance did not get it.
 */
import { fieldLabel } from "../actions/step-kind.js";
import type { PlannedChange } from "../plan/types.js";
import type { CompiledRule } from "../rules/types.js";
import { instanceFailure, type Locate, type Observed } from "./observed.js";
import type { ChangeExpect } from "./schema.js";
import type { Failure, Said } from "./types.js";
import { sameInput, shownInput } from "./values.js";
import { whyLines } from "./why.js";
import { isRecord } from "../model/guards.js";

/** action id → input_object, from the request body of a step change. */
function sentInputs(ch: PlannedChange): Map<number, unknown> {
  const out = new Map<number, unknown>();
  const body = ch.request.body;
  const actions = isRecord(body) && Array.isArray(body.actions) ? body.actions : [];
  for (const a of actions) if (isRecord(a) && typeof a.action_id === "number") out.set(a.action_id, a.input_object);
  return out;
}

function describe(kind: string, step: number | undefined): string {
  return step === undefined ? kind : `${kind} step ${step}`;
}

function fits(e: ChangeExpect, ch: PlannedChange): boolean {
  return (
    ch.instance_id === e.instance &&
    ch.kind === e.kind &&
    (e.step === undefined || ch.step_id === e.step) &&
    (e.rule === undefined || ch.rule === e.rule)
  );
}

/** An expected input key: an action id, an alias, or fields.<alias>. */
function actionOf(key: string, rule: CompiledRule | undefined): number | undefined {
  if (/^\d+$/.test(key)) return Number(key);
  const alias = key.replace(/^fields\./, "");
  return rule?.fields[alias]?.action;
}

function compareInputs(
  e: ChangeExpect,
  ch: PlannedChange,
  obs: Observed,
  locate: Locate,
  index: number,
  notes: string[],
): Failure[] {
  if (!e.inputs) return [];
  const rule = obs.rules.find((r) => r.name === ch.rule);
  const sent = sentInputs(ch);
  const out: Failure[] = [];
  const what = describe(ch.kind, ch.step_id);
  const label = (action: number): string =>
    rule && ch.step_id !== undefined ? fieldLabel(rule, ch.step_id, action) : `action ${action}`;
  const seen = new Set<number>();
  for (const [key, want] of Object.entries(e.inputs)) {
    const action = actionOf(key, rule);
    if (action === undefined) {
      out.push({
        subject: `${what} input "${key}"`,
        at: locate(["changes", index, "inputs", key]),
        expected: "an action id or a field alias of the rule",
        actual: `"${key}"`,
      });
      continue;
    }
    seen.add(action);
    const subject = `${what} input ${action} (${label(action)})`;
    if (!sent.has(action)) {
      out.push(instanceFailure(obs, ch.instance_id, { subject, expected: [{ value: want }], actual: "(not sent)" }));
    } else if (!sameInput(want, sent.get(action))) {
      out.push(
        instanceFailure(obs, ch.instance_id, {
          subject,
          expected: [{ value: want }],
          actual: [{ value: shownInput(want, sent.get(action)) }],
        }),
      );
    }
  }
  // a case states the inputs it cares about: the others are sent, not compared, and the output says which
  const unchecked = [...sent.keys()].filter((action) => !seen.has(action));
  if (unchecked.length > 0) {
    notes.push(
      `instance ${ch.instance_id} ${what}: ${unchecked.length === 1 ? "input" : "inputs"} ${unchecked.map((a) => `${a} (${label(a)})`).join(", ")} not compared (the case does not state ${unchecked.length === 1 ? "it" : "them"})`,
    );
  }
  return out;
}

/** Why an expected change was not planned: the rule did not match, the action was skipped, or a conflict/limit. */
function whyMissing(e: ChangeExpect, obs: Observed): Said[] {
  const rules = e.rule ? obs.rules.filter((r) => r.name === e.rule) : obs.rules;
  const why: Said[] = [];
  for (const r of rules) {
    const ex = obs.explanations.get(r.name)?.get(e.instance);
    if (!ex) {
      why.push(`instance is not in the workflow of rule "${r.name}"`);
      continue;
    }
    if (!ex.matched) why.push(...(rules.length > 1 ? [`rule ${r.name}: not matched`] : []), ...whyLines(ex));
    else if (ex.skipped.length > 0) why.push(...ex.skipped.map((s) => `skipped ${s}`));
  }
  for (const err of obs.plan.errors) {
    const concerns = err.instance_id === e.instance || (err.code === "limit" && rules.some((r) => r.name === err.rule));
    // an evaluation error is already explained by the clause that failed
    if (concerns && err.code !== "evaluation") why.push(err.message);
  }
  return why;
}

export function compareChanges(
  expected: ChangeExpect[],
  obs: Observed,
  locate: Locate,
  notes: string[] = [],
): Failure[] {
  const out: Failure[] = [];
  const left = [...obs.plan.changes];
  expected.forEach((e, i) => {
    const at = left.findIndex((ch) => fits(e, ch));
    const ch = at >= 0 ? left.splice(at, 1)[0] : undefined;
    if (!ch) {
      out.push(
        instanceFailure(obs, e.instance, {
          subject: describe(e.kind, e.step),
          expected: "planned",
          actual: "not planned",
          why: whyMissing(e, obs),
        }),
      );
      return;
    }
    if (e.audit !== undefined && e.audit !== (ch.audit === true)) {
      const mode = (audit: boolean): string => (audit ? "audit (never sent)" : "enforced");
      out.push(
        instanceFailure(obs, e.instance, {
          subject: describe(e.kind, e.step),
          expected: mode(e.audit),
          actual: mode(ch.audit === true),
        }),
      );
    }
    out.push(...compareInputs(e, ch, obs, locate, i, notes));
  });
  for (const ch of left) {
    const inputs = [...sentInputs(ch)].flatMap(([a, v], i) => [`${i > 0 ? ", " : ""}${a}: `, { value: v }]);
    out.push(
      instanceFailure(obs, ch.instance_id, {
        subject: `${describe(ch.kind, ch.step_id)}${obs.rules.length > 1 ? ` (rule ${ch.rule})` : ""}`,
        expected: "not planned",
        actual: inputs.length > 0 ? ["planned with ", ...inputs] : "planned",
      }),
    );
  }
  return out;
}

/**
 * What complete_step and save_step share: both POST /instances/{id}/complete_step/ with the rule's inputs evaluated
 * for the instance; they differ only in `mode`, in their words, and in how a record shows they took effect. Each of
 * the two modules is this factory called with its differences.
 */
import { isDeepStrictEqual } from "node:util";
// schemas.js alone: the barrel would load the HTTP client into validate and test, which load every kind
// (docs/performance.md, "Start-up")
import type { InstanceRecord } from "../api/schemas.js";
import { parseCompleteStepBody } from "../api/step-body.js";
import { fieldKey, plainValue } from "../model/field-values.js";
import type { SourcePos, StepInput } from "../model/rule-types.js";
import { sameValue } from "../model/values.js";
import type { PlannedChange } from "../plan/types.js";
import { idOrName, type JsonSchema } from "./schema-types.js";
import type { Effect, KindPresentation, MutatingActionKind, RuleInfo } from "./types.js";

export interface StepAction<K extends string> {
  kind: K;
  /** the step's id (or, until the workflow's structure resolves it, the key standing for its name) */
  step: number;
  /** the step's name when the rule names it, for messages */
  stepName?: string;
  inputs: StepInput[];
  pos: SourcePos;
}

export interface StepKindSpec<K extends string> {
  kind: K;
  /** the request's `mode` */
  mode: "complete" | "save";
  description: string;
  presentation: KindPresentation;
  /** "complete" / "save": the label is `${verb} step N` */
  verb: string;
  /** "completes" / "saves" */
  verbs: string;
  effect(change: PlannedChange, record: InstanceRecord): Effect;
}

/**
 * The name a reviewer knows a field by: its alias in this rule when it has one, else its action id. A rule over
 * several workflows gives the id: its alias stands for another field in each workflow, and the plan's entry of the
 * rule holds one alias mapping, so only the id is named right in every workflow (docs/writing-rules.md).
 */
export function fieldLabel(rule: RuleInfo, step: number, action: number): string {
  if (rule.workflows !== undefined) return `action ${action}`;
  for (const [alias, ref] of Object.entries(rule.fields)) {
    if (ref.step === step && ref.action === action) return `fields.${alias}`;
  }
  return `action ${action}`;
}

function stepSchema(kind: string, description: string): JsonSchema {
  return {
    type: "object",
    description,
    properties: {
      [kind]: {
        type: "object",
        description,
        properties: {
          step: idOrName(
            'The step to act on: its id, or its name (e.g. "Manager approval"). It must be active in the instance ' +
              "when the plan is applied.",
          ),
          inputs: {
            type: "array",
            description: "Form-field values to send with the step, as `actions` of the complete_step request.",
            items: {
              type: "object",
              properties: {
                action: idOrName(
                  'The form field: its id (action_id), or its name within the step (e.g. "Amount"); ' +
                    "`flowrules describe` lists both.",
                ),
                value: {
                  description:
                    "The field's input_object, in the service's form: text and number `{ inputValue: v }`, date " +
                    "`{ date: ISO }`, radio `{ inputValue: { radioItemSelected: A } }`, checklist " +
                    "`{ inputValue: { itemsChecked: [...], itemsNotChecked: [...] } }`. Any string may hold " +
                    "`{{ jsonata }}` templates, evaluated per instance.",
                },
              },
              required: ["action", "value"],
              additionalProperties: false,
            },
          },
        },
        required: ["step"],
        additionalProperties: false,
      },
    },
    required: [kind],
    additionalProperties: false,
  };
}

/** `$.a[2].b` → ["a", 2, "b"] (for nesting a body issue under request.body). */
function jsonPathKeys(jsonPath: string): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (const m of jsonPath.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g)) {
    if (m[1] !== undefined) keys.push(m[1]);
    else if (m[2] !== undefined) keys.push(Number(m[2]));
    else if (m[3] !== undefined) keys.push(m[3]);
  }
  return keys;
}

/** The `actions` of a step request body as sent. */
export function sentActions(change: PlannedChange): Array<{ action_id: number; input_object: unknown }> {
  const parsed = parseCompleteStepBody(change.request.body);
  return parsed.success ? (parsed.data.actions ?? []) : [];
}

/**
 * What `after` shows is what the request sends: a plan whose body was edited (and its digest recomputed)
 * is refused before any request, not applied while `show` shows the original. `after` holds `step N: completed`
 * for a completion and one entry per input field, labelled `action <id>`, or `fields.<alias>` when the rule named
 * it, with the value as plainValue shows it (an input given twice shows its last value). Key order is not relied on.
 * Not covered: which action an alias stands for is not in the plan, so a body that swaps the ids of two aliased
 * fields keeping their values passes (docs/safety.md).
 */
function shownIsSent(
  c: PlannedChange,
  step: number,
  actions: ReadonlyArray<{ action_id: number; input_object?: unknown }>,
  mode: "complete" | "save",
  issue: (path: PropertyKey[], message: string) => void,
): void {
  const stepKey = `step ${step}`;
  if (mode === "complete" && c.after[stepKey] !== "completed")
    issue(["after", stepKey], `a completion shows "${stepKey}": "completed"`);
  const sent = new Map<number, unknown>();
  for (const a of actions) sent.set(a.action_id, plainValue(a.input_object) ?? null);
  const aliased: string[] = [];
  for (const key of Object.keys(c.after)) {
    if (key === stepKey) continue;
    if (key.startsWith("fields.")) aliased.push(key);
    else if (!/^action \d+$/.test(key) || !sent.has(Number(key.slice(7))))
      issue(["after", key], "the request sends no such field");
  }
  const unlabelled: unknown[] = [];
  for (const [actionId, value] of sent) {
    const key = `action ${actionId}`;
    if (!(key in c.after)) unlabelled.push(value);
    else if (!isDeepStrictEqual(value, c.after[key]))
      issue(["after", key], "the request sends another value than the plan shows");
  }
  // the aliased fields: the same values, one for one
  const left = [...aliased];
  for (const value of unlabelled) {
    const at = left.findIndex((k) => isDeepStrictEqual(value, c.after[k]));
    if (at < 0) {
      issue(["request", "body", "actions"], "the request sends a value the plan does not show");
      return;
    }
    left.splice(at, 1);
  }
  if (left.length > 0) issue(["after", left[0] ?? ""], "the plan shows a value the request does not send");
}

export function stepKind<K extends string>(spec: StepKindSpec<K>): MutatingActionKind<K, StepAction<K>> {
  const { kind, mode } = spec;
  return {
    kind,
    mutating: true,
    description: spec.description,
    schema: stepSchema(kind, spec.description),
    bare: false,
    presentation: spec.presentation,

    compile(body, ctx) {
      const step = ctx.stepRef(body.step, ["step"]);
      if (step === undefined) return undefined;
      const inputs: StepInput[] = [];
      let ok = true;
      const list: unknown[] = Array.isArray(body.inputs) ? body.inputs : [];
      list.forEach((inp, k) => {
        if (typeof inp !== "object" || inp === null || Array.isArray(inp)) {
          ok = false;
          return;
        }
        const { action: rawAction, value: raw } = inp as { action?: unknown; value?: unknown };
        const value = ctx.value(raw, ["inputs", k, "value"], `inputs[${k}].value`);
        const action = ctx.fieldRef(
          rawAction,
          ["inputs", k, "action"],
          step,
          value ? { value, rel: ["inputs", k, "value"] } : undefined,
        );
        if (value === undefined || action === undefined) ok = false;
        else inputs.push({ action, value });
      });
      if (!ok) return undefined;
      return { kind, step, ...(typeof body.step === "string" ? { stepName: body.step } : {}), inputs, pos: ctx.pos };
    },

    mapRefs: (a, id) => {
      const { stepName: _name, ...rest } = a;
      return { ...rest, step: id(a.step), inputs: a.inputs.map((i) => ({ ...i, action: id(i.action) })) };
    },

    // a save reads the values it writes, so one whose values already hold can be left out (idempotent schedules)
    reads: (a) => (mode === "save" ? a.inputs.map((i) => ({ step: a.step, action: i.action })) : []),
    recordKeys: () => [],
    target: (a) => ({ step: a.step }),
    phrase: (a) => `${spec.verbs} step ${a.stepName !== undefined ? `"${a.stepName}"` : a.step}`,

    async plan({ rule, action, data, evaluate }) {
      // reasons name no id: the plan counts skipped matches by reason, per rule (`6 skipped: the step already holds
      // these values`), and explanations say which step beside them
      if (data.status !== "running") return { skipped: `the instance is ${data.status}` };
      const active = data.record?.active_step_ids;
      const inactive = active ? !active.includes(action.step) : data.stepActive?.get(action.step) === false;
      if (inactive) return { skipped: "the step is not active" };

      const actions: Array<{ action_id: number; input_object: unknown }> = [];
      const before: Record<string, unknown> = {};
      const after: Record<string, unknown> = {};
      if (mode === "complete") {
        before[`step ${action.step}`] = "active";
        after[`step ${action.step}`] = "completed";
      }
      let alreadyHeld = mode === "save" && action.inputs.length > 0;
      for (const inp of action.inputs) {
        const value = await evaluate(inp.value);
        actions.push({ action_id: inp.action, input_object: value });
        const label = fieldLabel(rule, action.step, inp.action);
        const key = fieldKey(action.step, inp.action);
        // "before" only when hydration read it; an unread value is left out rather than guessed
        if (data.values.has(key)) before[label] = plainValue(data.values.get(key)) ?? null;
        after[label] = plainValue(value) ?? null;
        // by meaning: a service may echo 12.5 as "12.50", a date with "+00:00", a checklist in another order
        alreadyHeld &&= data.values.has(key) && sameValue(data.values.get(key), value);
      }
      // a save whose every value already holds changes nothing: leaving it out keeps scheduled runs idempotent
      if (alreadyHeld) return { skipped: "the step already holds these values" };
      return {
        change: {
          id: `${rule.name}:${kind}:${data.id}:${action.step}`,
          rule: rule.name,
          instance_id: data.id,
          instance_name: data.name,
          process_id: data.process_id,
          kind,
          step_id: action.step,
          request: {
            method: "POST",
            path: `/instances/${data.id}/complete_step/`,
            body: { step_id: action.step, actions, mode },
          },
          before,
          after,
          precondition: {
            status: "running",
            active_step_id: action.step,
            ...(data.record?.last_updated_time ? { last_updated_time: data.record.last_updated_time } : {}),
          },
        },
      };
    },

    describe: (c, names) => {
      const step = `step ${c.step_id ?? "?"}${names?.step !== undefined ? ` ${JSON.stringify(names.step)}` : ""}`;
      return { label: `${spec.verb} ${step}`, effect: `${spec.verbs} ${step}` };
    },
    changeTarget: (c) => ({ step: c.step_id ?? -1 }),

    checkChange(c, issue) {
      // apply sends request.body as it stands: it must say exactly what kind, instance and step say, so what the
      // reviewer read (kind, step) is what is executed
      if (c.step_id === undefined) {
        issue(["step_id"], `a ${kind} change needs step_id`);
        return;
      }
      const path = `/instances/${c.instance_id}/complete_step/`;
      if (c.request.path !== path) issue(["request", "path"], `expected ${path}`);
      const body = parseCompleteStepBody(c.request.body);
      if (!body.success) {
        issue(["request", "body", ...jsonPathKeys(body.issue.jsonPath)], body.issue.problem);
        return;
      }
      if (body.data.step_id !== c.step_id)
        issue(["request", "body", "step_id"], `expected ${c.step_id} (the change's step_id)`);
      if ((body.data.mode ?? "complete") !== mode)
        issue(["request", "body", "mode"], `a ${kind} change is sent with mode "${mode}"`);
      if (c.precondition.active_step_id !== undefined && c.precondition.active_step_id !== c.step_id) {
        issue(["precondition", "active_step_id"], `expected ${c.step_id} (the change's step_id)`);
      }
      shownIsSent(c, c.step_id, body.data.actions ?? [], mode, issue);
    },

    effect: spec.effect,
    send: {
      mode: "each",
      send: (client, c) => {
        // checkChange passed this body when the plan was read: a failure here is a plan changed in memory since
        const body = parseCompleteStepBody(c.request.body);
        if (!body.success) throw new Error(`request body ${body.issue.jsonPath}: ${body.issue.problem}`);
        return client.completeStep(c.instance_id, body.data);
      },
    },
  };
}

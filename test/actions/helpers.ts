/**
 * What the kind tests share: the fixture rule file with one rule per kind (test/fixtures/rules/kinds.yaml), planning
 * one compiled action on one fixture instance the way the engine does, a kind's schema fragment under ajv, and
 * hand-made plan-file changes and instance records.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject } from "ajv";
import { actionKind, type ActionOutcome, type ChangeIssue, type ReportEntry } from "../../src/actions/index.js";
import type { InstanceData } from "../../src/actions/instance.js";
import type { InstanceRecord } from "../../src/api/index.js";
import { buildContext, planBindings } from "../../src/engine/context.js";
import { evalValue } from "../../src/engine/evaluate.js";
import type { PlannedChange } from "../../src/plan/types.js";
import { compileSources } from "../../src/rules/index.js";
import type { CompiledRule, Diagnostic } from "../../src/rules/types.js";
import { fixtureRules } from "../helpers/rules.js";

export const NOW = new Date("2026-11-01T12:00:00.000Z");
export const T0 = "2026-01-01T10:00:00.000Z";
export const T1 = "2026-01-01T11:00:00.000Z";

/** A rule of test/fixtures/rules/kinds.yaml by name. */
export function kindsRule(name: string): CompiledRule {
  const rule = fixtureRules("kinds").rules.find((r) => r.name === name);
  if (!rule) throw new Error(`no rule "${name}" in kinds.yaml`);
  return rule;
}

function firstAction(rule: CompiledRule) {
  const action = rule.actions[0];
  if (!action) throw new Error(`rule "${rule.name}" has no action`);
  return action;
}

function planInput(rule: CompiledRule, data: InstanceData) {
  const ctx = buildContext(rule, data, NOW.toISOString());
  const bindings = planBindings(NOW);
  return {
    rule,
    action: firstAction(rule),
    data,
    ctx,
    evaluate: (v: Parameters<typeof evalValue>[0]) => evalValue(v, ctx, bindings),
  };
}

/** The first action of a rule planned on one instance, through the registry, as src/engine/evaluate-instance.ts does. */
export async function planFirst(rule: CompiledRule, data: InstanceData): Promise<ActionOutcome> {
  const kind = actionKind(firstAction(rule).kind);
  if (!kind.mutating) throw new Error(`rule "${rule.name}" makes no change`);
  return kind.plan(planInput(rule, data));
}

/** The planned change, failing the test with the skip reason when there is none. */
export async function changeOf(rule: CompiledRule, data: InstanceData): Promise<PlannedChange> {
  const out = await planFirst(rule, data);
  if (!("change" in out)) throw new Error(`expected a change, got skipped: ${out.skipped}`);
  return out.change;
}

/** The report entry of a rule's first action for one instance. */
export function reportEntryOf(rule: CompiledRule, data: InstanceData): ReportEntry {
  const kind = actionKind(firstAction(rule).kind);
  if (kind.mutating) throw new Error(`rule "${rule.name}" is not a report`);
  return kind.entry(planInput(rule, data));
}

// ajv is CommonJS: under NodeNext the default import is module.exports, whose `default` is the class
const Ajv2020 = Ajv2020Module.default;

/** Validates entries against a kind's own schema fragment, strictly (as src/rules/validate-schema.ts sets ajv up). */
export function fragmentValidator(kind: string): (entry: unknown) => ErrorObject[] {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const validate = ajv.compile(actionKind(kind).schema);
  return (entry) => (validate(entry) ? [] : [...(validate.errors ?? [])]);
}

/** Diagnostics of a one-rule file on workflow 1042 with the given `actions:` block (YAML lines, 4-space indent). */
export function diagnosticsOf(actions: string): Diagnostic[] {
  const text = `version: 1\nrules:\n  - name: r\n    workflow: 1042\n    fields: { amount: { step: 20111, action: 50222 } }\n    actions:\n${actions}`;
  return compileSources([{ file: "mem.yaml", text }]).diagnostics.filter((d) => d.severity === "error");
}

/** Every refusal checkChange adds, as `path: message`. */
export function refusals(check: (c: PlannedChange, issue: ChangeIssue) => void, change: PlannedChange): string[] {
  const out: string[] = [];
  check(change, (path, message) => out.push(`${path.map(String).join(".")}: ${message}`));
  return out;
}

/** A plan-file change as the planner writes it, for instance 1 and step 20111 (the form test/apply uses). */
/** A plan-file change of `kind`: shaped as an abort's when the kind is abort, as a step kind's otherwise. */
export function change(kind: string, extra: Partial<PlannedChange> = {}): PlannedChange {
  const step = kind === "abort" ? {} : { step_id: 20111 };
  return {
    id: `r:${kind}:1`,
    rule: "r",
    instance_id: 1,
    instance_name: "one",
    process_id: 1042,
    kind,
    ...step,
    request:
      kind === "abort"
        ? { method: "POST", path: "/instances/bulk/abort", body: { ids: [1] } }
        : {
            method: "POST",
            path: "/instances/1/complete_step/",
            body: {
              step_id: 20111,
              mode: kind === "save_step" ? "save" : "complete",
              actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }],
            },
          },
    before: {},
    // what the body sends, as the planner shows it (a plan file's check ties the two)
    after:
      kind === "abort"
        ? { status: "aborted" }
        : { ...(kind === "complete_step" ? { "step 20111": "completed" } : {}), "action 50230": "ok" },
    precondition: { status: "running", ...(kind === "abort" ? {} : { active_step_id: 20111 }) },
    ...extra,
  };
}

type SnapshotStep = {
  id: number;
  completed_time?: string | null;
  actions?: Array<{ id: number; type?: string; input_object?: unknown }>;
};

/** An instance record of instance 1 in workflow 1042, step 20111 active unless said otherwise. */
export function record(r: Partial<InstanceRecord> & { steps?: SnapshotStep[] }): InstanceRecord {
  const { steps, ...rest } = r;
  return {
    id: 1,
    active_step_ids: [20111],
    last_updated_time: T0,
    process_snapshot: { id: 1042, steps: steps ?? [] },
    ...rest,
  } as InstanceRecord;
}

/**
 * A compact fixture (schema.ts) → the engine's InstanceData: a full record as GET /instances/{id}/?inject_values=true
 * would return it (times resolved against the test's `now`, values injected into process_snapshot), so the planner,
 * the select check and `instance.*` / `snapshot` expressions all see one consistent instance.
 */
import type { InstanceRecord } from "../api/schemas.js";
import { fieldKey } from "../model/field-values.js";
import { statusFromRecord, type InstanceData } from "../actions/instance.js";
import { resolveDateTime } from "../rules/datetime.js";
import type { FieldRef } from "../rules/types.js";
import { toInputObject } from "./input-objects.js";
import type { FieldTypeName, Fixture } from "./schema.js";

export interface FixtureEnv {
  now: Date;
  /** alias → field, over the rules under test; null when two of them give one alias different fields */
  aliases: ReadonlyMap<string, FieldRef | null>;
  /** by alias or `step:action` */
  fieldTypes: Readonly<Record<string, FieldTypeName>>;
  processId: number;
  /** the key of `fields_by_workflow` giving this workflow's values (they win over `fields`) */
  workflowKey?: string;
}

export interface FixtureProblem {
  /** path inside the fixture, e.g. ["fields", "amout"]; the message is about the key at its end */
  path: Array<string | number>;
  message: string;
}

const TIMES = ["deadline", "started_time", "last_updated_time", "completed_time", "aborted_time"] as const;

function typeOf(env: FixtureEnv, key: string, alias?: string): FieldTypeName | undefined {
  return (alias !== undefined ? env.fieldTypes[alias] : undefined) ?? env.fieldTypes[key];
}

function fieldValues(f: Fixture, env: FixtureEnv, problems: FixtureProblem[]): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const perWorkflow = env.workflowKey !== undefined ? (f.fields_by_workflow?.[env.workflowKey] ?? {}) : {};
  const sources: Array<[Array<string | number>, Record<string, unknown>]> = [
    [["fields"], Object.fromEntries(Object.entries(f.fields ?? {}).filter(([a]) => !(a in perWorkflow)))],
    [["fields_by_workflow", env.workflowKey ?? ""], perWorkflow],
  ];
  for (const [base, given] of sources) {
    for (const [alias, v] of Object.entries(given)) {
      const ref = env.aliases.get(alias);
      if (ref === undefined) {
        const known = [...env.aliases.keys()];
        problems.push({
          path: [...base, alias],
          message: `unknown field alias "${alias}": the rules of this workflow declare ${known.length > 0 ? known.join(", ") : "no fields"} (or write values: { "step:action": ... })`,
        });
        continue;
      }
      if (ref === null) {
        problems.push({
          path: [...base, alias],
          message: `field alias "${alias}" means different fields in the rules of this workflow: use values: { "step:action": ... }`,
        });
        continue;
      }
      const key = fieldKey(ref.step, ref.action);
      values.set(key, toInputObject(v, typeOf(env, key, alias), env.now));
    }
  }
  for (const [key, v] of Object.entries(f.values ?? {})) values.set(key, toInputObject(v, typeOf(env, key), env.now));
  return values;
}

/** process_snapshot in the shape docs/design.md ("process_snapshot") fixes, holding the fixture's values. */
function snapshot(processId: number, values: Map<string, unknown>): NonNullable<InstanceRecord["process_snapshot"]> {
  const steps = new Map<number, Array<{ id: number; input_object?: unknown }>>();
  for (const [key, input] of values) {
    const [step, action] = key.split(":").map(Number);
    if (step === undefined || action === undefined) continue;
    const list = steps.get(step) ?? [];
    list.push(input === undefined ? { id: action } : { id: action, input_object: input });
    steps.set(step, list);
  }
  return {
    id: processId,
    steps: [...steps.entries()].sort(([a], [b]) => a - b).map(([id, actions]) => ({ id, actions })),
  };
}

export function buildInstance(f: Fixture, env: FixtureEnv): { data: InstanceData; problems: FixtureProblem[] } {
  const problems: FixtureProblem[] = [];
  const times: Partial<Record<(typeof TIMES)[number], string>> = {};
  for (const k of TIMES) {
    const v = f[k];
    if (v !== undefined) times[k] = resolveDateTime(v, env.now);
  }
  // a status without its time still gets one, so the record is consistent (status derives from the times)
  if (f.status === "completed" && !times.completed_time) times.completed_time = env.now.toISOString();
  if (f.status === "aborted" && !times.aborted_time) times.aborted_time = env.now.toISOString();
  const values = fieldValues(f, env, problems);
  const name = f.name ?? `Instance ${f.id}`;
  const active = f.active_step_ids ?? (f.active_step !== undefined ? [f.active_step] : []);
  const record: InstanceRecord = {
    process: `/processes/${env.processId}/`,
    url: `/instances/${f.id}/`,
    id: f.id,
    name,
    started_time: times.started_time ?? null,
    completed_time: times.completed_time ?? null,
    aborted_time: times.aborted_time ?? null,
    last_updated_time: times.last_updated_time ?? null,
    process_snapshot: snapshot(env.processId, values),
    active_step_ids: active,
    step_deadlines: Object.entries(f.step_deadlines ?? {}).map(([step, at]) => ({
      step_id: Number(step),
      deadline: resolveDateTime(at, env.now),
    })),
    stage: f.stage ?? null,
    deadline: times.deadline ?? null,
    priority: f.priority === "Regular" ? null : (f.priority ?? null),
    tags: f.tags ?? [],
    ...(f.visibility_mode ? { visibility_mode: f.visibility_mode } : {}),
    ...(f.progress !== undefined ? { progress: f.progress } : {}),
    ...(f.record ?? {}),
  };
  return {
    data: { id: f.id, name, status: f.status ?? statusFromRecord(record), process_id: env.processId, record, values },
    problems,
  };
}

/**
 * The JSONata context of `when` and of templated values (docs/writing-rules.md): `instance`, `fields`, `snapshot`, `tags`,
 * `now`, plus `$daysSince(ts)`, `$hoursUntil(ts)`, the waiting helpers (./waiting.ts); `$now()` returns the plan's start so one plan is one instant.
 */
import { jsonata } from "../rules/jsonata-module.js";
import type { CompiledRule } from "../rules/types.js";
import { fieldKey, plainValue } from "../model/field-values.js";
import type { InstanceData } from "../actions/instance.js";
import type { EvalContext } from "../actions/types.js";
import { waitingBindings } from "./waiting.js";

/** The context's shape belongs to the actions layer, which plans with it. */
export type { EvalContext };

const MS_PER_DAY = 86_400_000;
const MS_PER_HOUR = 3_600_000;

function toMillis(ts: unknown): number | undefined {
  if (typeof ts !== "string" && typeof ts !== "number") return undefined;
  const ms = typeof ts === "number" ? ts : Date.parse(ts);
  return Number.isNaN(ms) ? undefined : ms;
}

export type Bindings = Record<string, unknown>;

/**
 * Bindings for one plan; built once per plan so evaluation allocates nothing per instance for them. Every time helper
 * takes the plan's instant from here and nowhere else: a forecast (`plan --at`, docs/forecast.md) moves them all by
 * passing another `now`.
 */
export function planBindings(now: Date): Bindings {
  const nowMs = now.getTime();
  const nowIso = now.toISOString();
  return {
    // undefined (not an error) for a missing or unparsable time, so `$daysSince(instance.deadline) > 3` is just false
    daysSince: (ts: unknown) => {
      const ms = toMillis(ts);
      return ms === undefined ? undefined : (nowMs - ms) / MS_PER_DAY;
    },
    hoursUntil: (ts: unknown) => {
      const ms = toMillis(ts);
      return ms === undefined ? undefined : (ms - nowMs) / MS_PER_HOUR;
    },
    // JSONata's $now(picture, timezone) is $fromMillis of the instant: the plan's start, formatted by JSONata itself
    // (a promise, which the evaluator awaits; the fast evaluator leaves the call to JSONata)
    now: (picture?: unknown, timezone?: unknown) =>
      picture === undefined && timezone === undefined
        ? nowIso
        : FROM_MILLIS.evaluate({}, { ms: nowMs, picture, timezone }),
  };
}

/**
 * The plan's bindings, plus the waiting helpers for this instance when the rule calls them (./waiting.ts); other
 * rules evaluate with the plan's bindings as they are.
 */
export function instanceBindings(rule: CompiledRule, data: InstanceData, bindings: Bindings, nowIso: string): Bindings {
  if (!rule.needs.times) return bindings;
  return { ...bindings, ...waitingBindings(rule, data, Date.parse(nowIso)) };
}

const FROM_MILLIS = jsonata("$fromMillis($ms, $picture, $timezone)");

/** The `fields` object of one rule for one instance: alias → plain value; an alias with no value is absent. */
export function fieldsFor(rule: CompiledRule, data: InstanceData): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [alias, ref] of Object.entries(rule.fields)) {
    const v = plainValue(data.values.get(fieldKey(ref.step, ref.action)));
    if (v !== undefined) fields[alias] = v;
  }
  return fields;
}

/** The instance as the context shows it: the full record when read, always with id, name, status, process_id. */
export function instanceView(data: InstanceData): Record<string, unknown> {
  return {
    ...(data.record ?? data.known ?? {}),
    id: data.id,
    name: data.name,
    status: data.status,
    ...(data.public_url !== undefined ? { public_url: data.public_url } : {}),
    process_id: data.process_id,
  };
}

export function buildContext(rule: CompiledRule, data: InstanceData, nowIso: string): EvalContext {
  return {
    instance: instanceView(data),
    fields: fieldsFor(rule, data),
    snapshot: data.record?.process_snapshot,
    tags: data.record?.tags ?? [],
    now: nowIso,
  };
}

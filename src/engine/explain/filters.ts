/**
 * The `select` filters (instance-list query parameters) checked client-side on one instance (its list element and full record), with the
 * semantics the sandbox implements: status any-of, tags any-of (OR), name/query case-insensitive substrings, date
 * bounds inclusive with relative values resolved at `now`, an instance without the date never matching. Filters the
 * record cannot answer (organization, lead_user, progress without step times) are `unknown`, never guessed.
 * Used by `flowrules explain` (why a live instance is or is not selected) and by `flowrules test` (which fixtures the
 * server-side selection would return).
 */
import { DATE_TIME_PARAMS, resolveDateTime } from "../../rules/datetime.js";
import type { SelectSpec } from "../../rules/types.js";
import type { InstanceData } from "../../actions/instance.js";
import { runtimeMs, showRuntime } from "./runtime.js";
import type { FilterCheck, FilterResult } from "./types.js";

const DATE_TIME = new Set(DATE_TIME_PARAMS);

function list(v: SelectSpec[string]): string[] {
  return (Array.isArray(v) ? v : String(v).split(",")).map((x) => String(x).trim()).filter((x) => x !== "");
}

function result(ok: boolean): FilterResult {
  return ok ? "pass" : "fail";
}

function showList(xs: readonly unknown[]): string {
  return xs.length === 0 ? "none" : xs.map(String).join(", ");
}

function timeOf(data: InstanceData, field: string): string | null | undefined {
  const r = data.record;
  if (!r) return undefined;
  if (field === "ended_time") return r.aborted_time ?? r.completed_time ?? null;
  const v = (r as Record<string, unknown>)[field];
  return typeof v === "string" ? v : null;
}

/** step_deadlines elements are not described by the spec; the sandbox (and docs/design.md) use { step_id, deadline }. */
function activeStepDeadlines(data: InstanceData): Array<{ step: number; at: string }> {
  const active = new Set(data.record?.active_step_ids ?? []);
  const out: Array<{ step: number; at: string }> = [];
  for (const e of data.record?.step_deadlines ?? []) {
    if (typeof e !== "object" || e === null) continue;
    const { step_id, deadline } = e as Record<string, unknown>;
    if (typeof step_id === "number" && typeof deadline === "string" && active.has(step_id))
      out.push({ step: step_id, at: deadline });
  }
  return out;
}

function checkDate(key: string, raw: string, data: InstanceData, now: Date): Omit<FilterCheck, "key" | "value"> {
  let bound: string;
  try {
    bound = resolveDateTime(raw, now);
  } catch {
    return { result: "unknown", actual: `cannot read ${JSON.stringify(raw)} as a date-time` };
  }
  const resolved = bound !== raw ? { resolved: bound } : {};
  const after = key.endsWith("_after");
  const field = key.slice(0, key.lastIndexOf(after ? "_after" : "_before"));
  const limit = Date.parse(bound);
  const inRange = (t: string): boolean => (after ? Date.parse(t) >= limit : Date.parse(t) <= limit);
  if (!data.record) return { ...resolved, result: "unknown", actual: "the full record was not read" };
  if (field === "step_deadline") {
    const ds = activeStepDeadlines(data);
    if (ds.length === 0) return { ...resolved, result: "fail", actual: "no active step has a deadline" };
    return {
      ...resolved,
      result: result(ds.some((d) => inRange(d.at))),
      actual: `active step deadlines: ${ds.map((d) => `${d.step} ${d.at}`).join(", ")}`,
    };
  }
  const t = timeOf(data, field);
  if (!t) return { ...resolved, result: "fail", actual: `no ${field}` };
  return { ...resolved, result: result(inRange(t)), actual: `${field} ${t}` };
}

function checkRuntime(key: string, raw: string, data: InstanceData, now: Date): Omit<FilterCheck, "key" | "value"> {
  const bound = runtimeMs(raw);
  const started = data.record?.started_time;
  if (bound === undefined) return { result: "unknown", actual: `cannot read ${JSON.stringify(raw)} as a duration` };
  if (!started) return { result: "unknown", actual: "no started_time to measure the run time from" };
  const end = timeOf(data, "ended_time") ?? now.toISOString();
  const ms = Math.max(0, Date.parse(end) - Date.parse(started));
  const ok = key.endsWith("_min") ? ms >= bound : ms <= bound;
  return { result: result(ok), actual: `run time ${showRuntime(ms)}` };
}

/** Progress is derivable only when the snapshot carries step completion times (steps_time_frame=true). */
function progressOf(data: InstanceData): number | undefined {
  if (data.status === "completed") return 100;
  const own = (data.record as Record<string, unknown> | undefined)?.progress;
  if (typeof own === "number") return own;
  const steps = data.record?.process_snapshot?.steps ?? [];
  if (steps.length === 0 || !steps.every((s) => "completed_time" in s)) return undefined;
  return Math.floor((100 * steps.filter((s) => s.completed_time).length) / steps.length);
}

function checkOne(
  key: string,
  value: SelectSpec[string],
  data: InstanceData,
  now: Date,
): Omit<FilterCheck, "key" | "value"> {
  const r = data.record;
  if (DATE_TIME.has(key)) return checkDate(key, String(value), data, now);
  switch (key) {
    case "status": {
      const want = list(value);
      return { result: result(want.includes(data.status)), actual: `status ${data.status}` };
    }
    case "priority": {
      if (!r) return { result: "unknown", actual: "the full record was not read" };
      const p = r.priority ?? null;
      const want = String(value).toLowerCase() === "null" ? null : String(value);
      return { result: result(p === want), actual: `priority ${p ?? "Regular (none)"}` };
    }
    case "name": {
      const ok = data.name.toLowerCase().includes(String(value).toLowerCase());
      return { result: result(ok), actual: `name ${JSON.stringify(data.name)} (case-insensitive substring)` };
    }
    case "query": {
      const q = String(value).toLowerCase();
      const tags = r?.tags ?? [];
      const ok = data.name.toLowerCase().includes(q) || tags.some((t) => t.toLowerCase().includes(q));
      if (!ok && !r) return { result: "unknown", actual: "the full record was not read" };
      return {
        result: result(ok),
        actual: `name ${JSON.stringify(data.name)}, tags: ${showList(tags)} (free text, as the sandbox searches)`,
      };
    }
    case "tags": {
      if (!r) return { result: "unknown", actual: "the full record was not read" };
      const want = list(value);
      const tags = r.tags ?? [];
      return {
        result: result(tags.some((t) => want.includes(t))),
        actual: `tags: ${showList(tags)} (any of the listed tags)`,
      };
    }
    case "process":
      return { result: result(Number(value) === data.process_id), actual: `workflow ${data.process_id}` };
    case "active_step_id": {
      if (!r) return { result: "unknown", actual: "the full record was not read" };
      const active = r.active_step_ids ?? [];
      return { result: result(active.includes(Number(value))), actual: `active steps: ${showList(active)}` };
    }
    case "progress_min":
    case "progress_max": {
      const p = progressOf(data);
      if (p === undefined)
        return { result: "unknown", actual: "progress cannot be derived from the record (no step completion times)" };
      const ok = key === "progress_min" ? p >= Number(value) : p <= Number(value);
      return { result: result(ok), actual: `progress ${p}%` };
    }
    case "total_runtime_min":
    case "total_runtime_max":
      return checkRuntime(key, String(value), data, now);
    case "organization":
    case "lead_user":
      return {
        result: "unknown",
        actual: `the record does not show ${key === "lead_user" ? "the workflow leads" : "the organization"}`,
      };
    default:
      return { result: "unknown", actual: "not a filter flowrules can check client-side" };
  }
}

/** Every filter of `select`, in the order written. */
export function checkFilters(select: SelectSpec, data: InstanceData, now: Date): FilterCheck[] {
  return Object.entries(select).map(([key, value]) => ({ key, value, ...checkOne(key, value, data, now) }));
}

/** fail if any filter fails, unknown if none fails but one cannot be checked, else pass. */
export function selectionResult(checks: readonly FilterCheck[]): FilterResult {
  if (checks.some((c) => c.result === "fail")) return "fail";
  if (checks.some((c) => c.result === "unknown")) return "unknown";
  return "pass";
}

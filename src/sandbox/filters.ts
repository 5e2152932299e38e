/**
 * Instance filters of 4.2 (and, with `extended`, the extra ones of 4.6), combinable (AND across parameters).
 *
 * Semantics chosen where the spec only names the parameter:
 * - status: repeated (`status=running&status=aborted`) or comma-separated; any of the values.
 * - priority: H or V (`priority=null` selects Regular, i.e. no priority).
 * - name: case-insensitive substring of the name. query: case-insensitive substring of the name or of any tag.
 * - tags: comma-separated (or repeated); an instance matches when it carries ANY of them (OR), exact tag text.
 * - organization: all demo data belongs to organization 1. process: the workflow id. lead_user: a user id among the
 *   workflow's leads. active_step_id: the step is currently active.
 * - progress_min / progress_max: integers 0–100, inclusive bounds (400 outside).
 * - total_runtime_min / total_runtime_max: durations (see durations.ts), inclusive bounds.
 * - X_after / X_before: ISO 8601 date-times, inclusive (>= / <=); an instance with no value for X never matches.
 *   step_deadline matches when any active step's deadline is in range; ended_time is completed or aborted time.
 * - 4.6 only: instance_ids (comma-separated or repeated), id (one instance), progress (exact).
 */
import { badRequest } from "./errors.js";
import { parseDuration } from "./durations.js";
import { parseIsoDateTime } from "./dates.js";
import { workflowOf } from "./lookup.js";
import type { Query } from "./query.js";
import {
  STATUSES,
  endedTimeOf,
  progressOf,
  runtimeOf,
  statusOf,
  type InstanceState,
  type InstanceStatus,
} from "./state.js";
import { DATE_FIELDS } from "../model/date-fields.js";

type DateField = (typeof DATE_FIELDS)[number];

/** Every demo workflow belongs to this organization. */
export const ORGANIZATION_ID = 1;

export type Predicate = (inst: InstanceState) => boolean;

export interface FilterOptions {
  /** accept the 4.6-only parameters */
  extended: boolean;
  /** moment that running instances' total_runtime is measured to */
  asOf: number;
}

export function parseFilters(q: Query, opts: FilterOptions): Predicate {
  const preds: Predicate[] = [];

  const statuses = q.many("status");
  if (statuses.length) {
    for (const s of statuses) {
      if (!(STATUSES as readonly string[]).includes(s))
        throw badRequest(`Unknown status "${s}". Allowed: ${STATUSES.join(", ")}.`);
    }
    const set = new Set(statuses as InstanceStatus[]);
    preds.push((i) => set.has(statusOf(i)));
  }

  const priority = q.one("priority");
  if (priority !== undefined) {
    if (priority === "H" || priority === "V") preds.push((i) => i.priority === priority);
    else if (priority.toLowerCase() === "null") preds.push((i) => i.priority === null);
    else throw badRequest(`Unknown priority "${priority}". Allowed: H, V (or null for Regular).`);
  }

  const name = q.one("name")?.toLowerCase();
  if (name !== undefined) preds.push((i) => i.name.toLowerCase().includes(name));

  const text = q.one("query")?.toLowerCase();
  if (text !== undefined) {
    preds.push((i) => i.name.toLowerCase().includes(text) || i.tags.some((t) => t.toLowerCase().includes(text)));
  }

  const tags = q.many("tags");
  if (tags.length) {
    const set = new Set(tags);
    preds.push((i) => {
      for (const t of i.tags) if (set.has(t)) return true;
      return false;
    });
  }

  const org = q.int("organization");
  if (org !== undefined && org !== ORGANIZATION_ID) preds.push(() => false);

  const process = q.int("process");
  if (process !== undefined) preds.push((i) => i.processId === process);

  const lead = q.int("lead_user");
  if (lead !== undefined) preds.push((i) => workflowOf(i.processId).leads.includes(lead));

  const active = q.int("active_step_id");
  if (active !== undefined) preds.push((i) => i.activeStepIds.includes(active));

  const pmin = q.int("progress_min", { min: 0, max: 100 });
  const pmax = q.int("progress_max", { min: 0, max: 100 });
  if (pmin !== undefined) preds.push((i) => progressOf(i) >= pmin);
  if (pmax !== undefined) preds.push((i) => progressOf(i) <= pmax);

  const rmin = duration(q, "total_runtime_min");
  const rmax = duration(q, "total_runtime_max");
  if (rmin !== undefined) preds.push((i) => runtimeOf(i, opts.asOf) >= rmin);
  if (rmax !== undefined) preds.push((i) => runtimeOf(i, opts.asOf) <= rmax);

  for (const field of DATE_FIELDS) {
    if (opts.extended && q.has(field)) {
      throw badRequest(`Use ${field}_after and/or ${field}_before (ISO 8601) to filter on ${field}.`);
    }
    const after = dateParam(q, `${field}_after`);
    const before = dateParam(q, `${field}_before`);
    if (after === undefined && before === undefined) continue;
    const lo = after ?? -Infinity,
      hi = before ?? Infinity;
    if (field === "step_deadline") {
      preds.push((i) => {
        for (const [stepId, t] of i.stepDeadlines)
          if (t >= lo && t <= hi && i.activeStepIds.includes(stepId)) return true;
        return false;
      });
    } else {
      const get = dateGetter(field);
      preds.push((i) => {
        const t = get(i);
        return t !== null && t >= lo && t <= hi;
      });
    }
  }

  if (opts.extended) {
    const ids = q.ints("instance_ids");
    if (q.has("instance_ids")) {
      const set = new Set(ids);
      preds.push((i) => set.has(i.id));
    }
    const id = q.int("id");
    if (id !== undefined) preds.push((i) => i.id === id);
    const progress = q.int("progress", { min: 0, max: 100 });
    if (progress !== undefined) preds.push((i) => progressOf(i) === progress);
  }

  return combine(preds);
}

function combine(preds: Predicate[]): Predicate {
  if (preds.length === 0) return () => true;
  if (preds.length === 1) return preds[0] as Predicate;
  return (inst) => {
    for (const p of preds) if (!p(inst)) return false;
    return true;
  };
}

function duration(q: Query, name: string): number | undefined {
  const raw = q.one(name);
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === null) {
    throw badRequest(
      `${name} must be a duration such as "00:50" (HH:MM), "01 09:30" (D HH:MM), "02:30:00" (HH:MM:SS) or "PT50M" (ISO 8601); got "${raw}".`,
    );
  }
  return ms;
}

function dateParam(q: Query, name: string): number | undefined {
  const raw = q.one(name);
  if (raw === undefined) return undefined;
  const t = parseIsoDateTime(raw);
  if (t === null) throw badRequest(`${name} must be an ISO 8601 date-time such as 2024-05-01T12:00:00Z; got "${raw}".`);
  return t;
}

function dateGetter(field: Exclude<DateField, "step_deadline">): (i: InstanceState) => number | null {
  switch (field) {
    case "started_time":
      return (i) => i.startedTime;
    // never changed: last updated when it started, as the record shows it
    case "last_updated_time":
      return (i) => i.lastUpdatedTime ?? i.startedTime;
    case "deadline":
      return (i) => i.deadline;
    case "aborted_time":
      return (i) => i.abortedTime;
    case "completed_time":
      return (i) => i.completedTime;
    case "ended_time":
      return endedTimeOf;
  }
}

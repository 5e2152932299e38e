/**
 * A forecast (docs/forecast.md): the plans of the same rules at several instants, from data read once, now. Each
 * point is an ordinary plan (./plan-live.ts) at its instant, so `forecast` and `plan --at` agree by construction; the
 * points share one almanac and one TimelineClient (./forecast-client.ts), so the data is read about once for the whole
 * horizon: the first point costs a plan, each later one only the slices its moving bounds swept and the fields of the
 * instances that entered.
 */
import type { ApiClient } from "../api/index.js";
import type { Plan } from "../plan/types.js";
import { newAlmanac } from "./almanac.js";
import { TimelineClient } from "./forecast-client.js";
import { runPlan, type RunPlanOptions } from "./plan-live.js";

export interface ForecastPoint {
  at: Date;
  plan: Plan;
}

export interface ForecastRun {
  points: ForecastPoint[];
  /** time-relative selections brought forward by slices instead of listed again */
  sliced: number;
}

/** The instants of a forecast: `start`, then every `everyMs` up to and including `until` (its last point). */
export function forecastInstants(start: Date, until: Date, everyMs: number): Date[] {
  const out = [start];
  for (let t = start.getTime() + everyMs; t < until.getTime(); t += everyMs) out.push(new Date(t));
  if (until.getTime() > start.getTime()) out.push(until);
  return out;
}

/** The plans at `instants` (in increasing order), data read once through `client`. */
export async function forecastPlans(
  opts: Omit<RunPlanOptions, "now" | "almanac" | "client" | "recordSeen"> & { client: ApiClient; instants: Date[] },
): Promise<ForecastRun> {
  const { instants, client: inner, ...rest } = opts;
  const first = instants[0];
  if (first === undefined) return { points: [], sliced: 0 };
  const almanac = newAlmanac();
  const client = new TimelineClient(inner, instants, { rules: rest.ruleSet.rules, almanac });
  const points: ForecastPoint[] = [];
  for (const at of instants) {
    client.moveTo(at);
    points.push({ at, plan: await runPlan({ ...rest, client, now: at, almanac }) });
  }
  return { points, sliced: client.sliced };
}

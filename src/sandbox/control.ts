/**
 * The sandbox's control endpoints for people's work and the clock (docs/sandbox.md, "People at work"), outside
 * `/api` and without a key, like `/__sandbox/requests`:
 *
 *   POST /__sandbox/people  {"seed": 2, "churn": 0.01, "advance": "PT10M"}   → the changes made (PeopleResult)
 *   GET  /__sandbox/clock                                                    → {"now": "…"}
 *   POST /__sandbox/clock   {"advance": "PT10M"}                             → {"now": "…"}
 *
 * `advance` (milliseconds or an ISO 8601 duration) moves the clock after the work is done.
 */
import { parseDuration } from "./durations.js";
import { PEOPLE_ACTIONS, simulatePeople, type PeopleAction, type PeopleOptions } from "./people.js";
import type { SandboxStore } from "./store.js";

export interface ControlAnswer {
  status: number;
  body: unknown;
}

/** Milliseconds from a number of ms or a duration text ("PT10M", "00:10"); throws RangeError otherwise. */
export function clockStep(by: number | string): number {
  const ms = typeof by === "number" ? by : parseDuration(by);
  if (ms === null || !Number.isFinite(ms) || ms < 0)
    throw new RangeError(
      `the clock moves forward by milliseconds or a duration such as PT10M, got ${JSON.stringify(by)}`,
    );
  return ms;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function optionalNumber(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number") throw new RangeError(`${key} must be a number`);
  return v;
}

function advanceOf(body: Record<string, unknown>): number | undefined {
  const v = body.advance;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" && typeof v !== "string")
    throw new RangeError("advance must be milliseconds or a duration such as PT10M");
  return clockStep(v);
}

export function peopleControl(store: SandboxStore, method: string, body: unknown): ControlAnswer {
  if (method !== "POST")
    return { status: 405, body: { detail: `Method "${method}" not allowed on /__sandbox/people.` } };
  const b = body ?? {};
  if (!isRecord(b)) return { status: 400, body: { detail: 'The body must be a JSON object such as {"churn": 0.01}.' } };
  try {
    const kinds = b.kinds;
    if (
      kinds !== undefined &&
      !(
        Array.isArray(kinds) &&
        kinds.every((k): k is PeopleAction => (PEOPLE_ACTIONS as readonly unknown[]).includes(k))
      )
    ) {
      throw new RangeError(`kinds must be a list of: ${PEOPLE_ACTIONS.join(", ")}`);
    }
    const opts: PeopleOptions = {
      seed: optionalNumber(b, "seed"),
      churn: optionalNumber(b, "churn"),
      changes: optionalNumber(b, "changes"),
      kinds,
    };
    const advance = advanceOf(b);
    const result = simulatePeople(store, opts);
    const now = advance === undefined ? store.now() : store.advanceClock(advance);
    return { status: 200, body: { ...result, now: now.toISOString() } };
  } catch (err) {
    return { status: 400, body: { detail: err instanceof Error ? err.message : String(err) } };
  }
}

export function clockControl(store: SandboxStore, method: string, body: unknown): ControlAnswer {
  if (method === "GET" || method === "HEAD") return { status: 200, body: { now: store.now().toISOString() } };
  if (method !== "POST")
    return { status: 405, body: { detail: `Method "${method}" not allowed on /__sandbox/clock.` } };
  const b = body ?? {};
  if (!isRecord(b))
    return { status: 400, body: { detail: 'The body must be a JSON object such as {"advance": "PT10M"}.' } };
  try {
    const advance = advanceOf(b) ?? 0;
    return { status: 200, body: { now: store.advanceClock(advance).toISOString() } };
  } catch (err) {
    return { status: 400, body: { detail: err instanceof Error ? err.message : String(err) } };
  }
}

/**
 * Records kept small: a process_snapshot is mostly the workflow's structure, the same for every instance started on
 * one version of it. It is kept once (a skeleton, by digest) and each record keeps only its own parts: the input
 * values of its actions and the completion times of its steps. Expanding gives back a record equal in meaning.
 */
import { createHash } from "node:crypto";
import type { InstanceRecord } from "../api/index.js";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";

/** [step index, action index, input_object] */
export type ValueHole = [number, number, unknown];
/** [step index, completed_time] */
export type TimeHole = [number, unknown];

export interface CompactRecord {
  /** the record without process_snapshot */
  record: InstanceRecord;
  /** digest of the snapshot's skeleton; null when the record has no snapshot (then `snapshot` says which) */
  skeleton: string | null;
  /** the snapshot as given when it has no steps to split (null, absent, or of another shape) */
  snapshot?: unknown;
  values: ValueHole[];
  times: TimeHole[];
}

export function compactRecord(full: InstanceRecord, skeletons: Map<string, unknown>): CompactRecord {
  const { process_snapshot: snap, ...rest } = full;
  const record: InstanceRecord = rest;
  if (!isRecord(snap) || !Array.isArray(snap.steps)) {
    return { record, skeleton: null, ...(snap === undefined ? {} : { snapshot: snap }), values: [], times: [] };
  }
  const values: ValueHole[] = [];
  const times: TimeHole[] = [];
  const steps = snap.steps.map((step: unknown, i: number) => {
    if (!isRecord(step)) return step;
    const { completed_time, actions, ...rest } = step;
    if ("completed_time" in step) times.push([i, completed_time]);
    const bare: Record<string, unknown> = { ...rest };
    if ("actions" in step) {
      bare.actions = Array.isArray(actions)
        ? actions.map((a: unknown, j: number) => {
            if (!isRecord(a) || !("input_object" in a)) return a;
            const { input_object, ...aRest } = a;
            values.push([i, j, input_object]);
            return aRest;
          })
        : actions;
    }
    return bare;
  });
  const skeleton = { ...snap, steps };
  const key = createHash("sha256").update(canonicalJson(skeleton)).digest("hex").slice(0, 32);
  if (!skeletons.has(key)) skeletons.set(key, skeleton);
  return { record, skeleton: key, values, times };
}

/** The full record again; undefined when its skeleton is missing (then it is read again). */
export function expandRecord(c: CompactRecord, skeletons: ReadonlyMap<string, unknown>): InstanceRecord | undefined {
  if (c.skeleton === null)
    return { ...c.record, ...("snapshot" in c ? { process_snapshot: c.snapshot } : {}) } as InstanceRecord;
  const skeleton = skeletons.get(c.skeleton);
  if (!isRecord(skeleton) || !Array.isArray(skeleton.steps)) return undefined;
  const steps = structuredClone(skeleton.steps) as unknown[];
  for (const [i, t] of c.times) {
    const step = steps[i];
    if (isRecord(step)) step.completed_time = t;
  }
  for (const [i, j, v] of c.values) {
    const step = steps[i];
    const action = isRecord(step) && Array.isArray(step.actions) ? (step.actions as unknown[])[j] : undefined;
    if (isRecord(action)) action.input_object = v;
  }
  return { ...c.record, process_snapshot: { ...skeleton, steps } } as InstanceRecord;
}

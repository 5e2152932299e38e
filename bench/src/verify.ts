/**
 * Did a side do the work, all of it and nothing else? Checked on the sandbox's own data, so a side that sent fewer
 * requests by skipping work would be caught here rather than praised.
 */
import type { SandboxStore } from "#flowrules/sandbox/index.js";
import { STEP_ID, WORKFLOW_ID, type Expected } from "./scenario.js";

export interface Verification {
  /** expected complete_steps whose step is now completed */
  completed: number;
  /** expected aborts now aborted */
  aborted: number;
  /** running instances of the workflow outside both lists that changed status or active steps (must be 0) */
  collateral: number;
  ok: boolean;
}

/** Status and active steps of every running instance of the workflow: taken before a side runs. */
export function snapshotRunning(store: SandboxStore): Map<number, string> {
  const out = new Map<number, string>();
  for (const i of store.list(WORKFLOW_ID)) {
    if (i.completedTime === null && i.abortedTime === null) out.set(i.id, i.activeStepIds.join(","));
  }
  return out;
}

export function verify(store: SandboxStore, expected: Expected, before: Map<number, string>): Verification {
  let completed = 0;
  let aborted = 0;
  for (const id of expected.complete) {
    const i = store.peek(id);
    if (i && i.abortedTime === null && !i.activeStepIds.includes(STEP_ID) && i.stepCompletedTimes.has(STEP_ID))
      completed += 1;
  }
  for (const id of expected.abort) if (store.peek(id)?.abortedTime != null) aborted += 1;
  const touched = new Set([...expected.complete, ...expected.abort]);
  let collateral = 0;
  for (const [id, steps] of before) {
    if (touched.has(id)) continue;
    const i = store.peek(id);
    if (!i || i.completedTime !== null || i.abortedTime !== null || i.activeStepIds.join(",") !== steps)
      collateral += 1;
  }
  return {
    completed,
    aborted,
    collateral,
    ok: completed === expected.complete.length && aborted === expected.abort.length && collateral === 0,
  };
}

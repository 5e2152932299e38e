/**
 * The request floor of the benchmark's work (docs/design.md, "Performance model"), and the naive baseline's request count.
 *
 * Plan: every rule needs its own selection listed (the narrow rule's `active_step_id` filter is information only a
 * filtered list or a record read gives), 500 a page; each field the conditions read is fetched once per instance
 * however many rules read it, 500 instances a form-field page (4.6 with `instance_ids`). So
 *   plan floor = ceil(selected/500) + ceil(selectedAtStep/500) + K · ceil(selected/500) + 2.
 * The 2: the rules' steps and fields are checked against the workflow's live structure before anything is selected
 * (one list of its newest instance, one read of it; docs/workflows.md).
 *
 * Apply: there is no bulk complete endpoint, so one request per complete_step; aborts go in bulk batches of 100 ids
 * (the apply default: the spec states no maximum, the sandbox takes 500); and one list per workflow to learn what
 * changed since the plan (staleness), without which apply could not refuse stale changes. So
 *   apply floor = completes + ceil(aborts/100) + 1.
 */
import { ABORT_BATCH, FIELDS_READ, PAGE_SIZE, type Workload } from "./scenario.js";

/** Reading the one workflow's structure: its newest instance listed, then read. */
export const STRUCTURE_READS = 2;

/** A list is one request even when empty. */
const pages = (n: number, size: number): number => Math.max(1, Math.ceil(n / size));

export interface Floor {
  plan: number;
  apply: number;
  total: number;
}

export function floorOf(w: Workload, abortBatch = ABORT_BATCH): Floor {
  const plan =
    pages(w.selected, PAGE_SIZE) +
    pages(w.selectedAtStep, PAGE_SIZE) +
    FIELDS_READ * Math.ceil(w.selected / PAGE_SIZE) +
    STRUCTURE_READS;
  const apply = w.completes + Math.ceil(w.aborts / abortBatch) + 1;
  return { plan, apply, total: plan + apply };
}

/** v1-style pages of 100, one record read per instance, one request per mutation (docs/design.md, "Performance model": naive). */
export const NAIVE_PAGE_SIZE = 100;

export function naiveRequests(w: Workload): Floor {
  const plan = pages(w.selected, NAIVE_PAGE_SIZE) + w.selected;
  const apply = w.completes + w.aborts;
  return { plan, apply, total: plan + apply };
}

/**
 * The benchmark's workload, shared by the flowrules side, the naive baseline and the floor: two rules over the
 * running instances of workflow 1042 (Expense claim) that read two form fields, amount and currency.
 *
 * - `bench-abort-others` selects every running claim (the "most running instances" of the issue) and aborts all but
 *   the small EUR ones: the bulk of the changes, sent as bulk aborts.
 * - `bench-approve-small` selects the claims waiting on step 20111 and completes it for the small EUR ones: a few
 *   hundred complete_step calls at N = 10,000.
 *
 * The two `when` conditions are complements, so no instance is both aborted and completed (no conflict). The broad
 * rule comes first: its field reads fill the almanac, so the narrow rule's fields cost no request at all.
 */
import type { InstanceState } from "#flowrules/sandbox/index.js";

export const WORKFLOW_ID = 1042;
export const STEP_ID = 20111;
export const AMOUNT_ACTION = 50222;
export const CURRENCY_ACTION = 50223;
export const COMMENT_ACTION = 50230;
export const DATE_ACTION = 50231;
/** form fields the conditions read (K in docs/design.md, "Performance model") */
export const FIELDS_READ = 2;
/** ids per bulk abort request: the apply default (the sandbox accepts 500; the spec states no maximum) */
export const ABORT_BATCH = 100;
/** the largest page the service serves, for lists (4.2) and form-field pages (4.6) */
export const PAGE_SIZE = 500;
export const API_KEY = "sandbox-admin";

/** The environment of a flowrules CLI child of a benchmark: the sandbox, its key, the client's rate limit (0 = off). */
export function cliEnv(baseUrl: string, rateLimit: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FLOWRULES_BASE_URL: baseUrl,
    FLOWRULES_API_KEY: API_KEY,
    FLOWRULES_RATE_LIMIT: String(rateLimit),
  };
}
export const APPROVAL_COMMENT = "Approved by rule bench-approve-small";

export const RULES_FILE = "bench-rules.yaml";

export const RULES_YAML = `version: 1
rules:
  - name: bench-abort-others
    description: Abort every running expense claim that is not a small EUR claim
    workflow: ${WORKFLOW_ID}
    fields:
      amount: { step: ${STEP_ID}, action: ${AMOUNT_ACTION} }
      currency: { step: ${STEP_ID}, action: ${CURRENCY_ACTION} }
    select:
      status: [running]
    when: $not(fields.amount < 100 and fields.currency = "EUR")
    actions: [ abort ]

  - name: bench-approve-small
    description: Approve small EUR expense claims waiting on manager approval
    workflow: ${WORKFLOW_ID}
    fields:
      amount: { step: ${STEP_ID}, action: ${AMOUNT_ACTION} }
      currency: { step: ${STEP_ID}, action: ${CURRENCY_ACTION} }
    select:
      status: [running]
      active_step_id: ${STEP_ID}
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: ${STEP_ID}
          inputs:
            - action: ${COMMENT_ACTION}
              value: { inputValue: "${APPROVAL_COMMENT}" }
            - action: ${DATE_ACTION}
              value: { date: "{{ $now() }}" }
`;

/** What a naive script (or anyone) decides for one running instance, from plain values. */
export type Decision = "complete" | "abort" | "none";

/** The same decision as the two rules above, in plain JavaScript (the naive baseline and the expectations use it). */
export function decide(amount: unknown, currency: unknown, activeStepIds: readonly number[]): Decision {
  const small = typeof amount === "number" && amount < 100 && currency === "EUR";
  if (!small) return "abort";
  return activeStepIds.includes(STEP_ID) ? "complete" : "none";
}

/** Plain value of a number or radio input object, as the sandbox stores it. */
export function plainInput(v: unknown): unknown {
  if (typeof v !== "object" || v === null || !("inputValue" in v)) return undefined;
  const iv = (v as { inputValue: unknown }).inputValue;
  if (typeof iv === "object" && iv !== null && "radioItemSelected" in iv)
    return (iv as { radioItemSelected: unknown }).radioItemSelected;
  return iv;
}

/** The sizes of the work at one N, read from the sandbox's data before anything runs. */
export interface Workload {
  /** instances in the sandbox (all workflows, all statuses) */
  instances: number;
  /** running instances of the workflow: the broad rule's selection */
  selected: number;
  /** of those, with step 20111 active: the narrow rule's selection */
  selectedAtStep: number;
  /** expected complete_step changes */
  completes: number;
  /** expected aborts */
  aborts: number;
}

/** The ids each change kind must reach: checked against the sandbox's data after a side ran. */
export interface Expected {
  complete: number[];
  abort: number[];
}

export function workloadOf(
  instances: readonly InstanceState[],
  total: number,
): { workload: Workload; expected: Expected } {
  const w: Workload = { instances: total, selected: 0, selectedAtStep: 0, completes: 0, aborts: 0 };
  const expected: Expected = { complete: [], abort: [] };
  for (const i of instances) {
    if (i.processId !== WORKFLOW_ID || i.completedTime !== null || i.abortedTime !== null) continue;
    w.selected += 1;
    if (i.activeStepIds.includes(STEP_ID)) w.selectedAtStep += 1;
    const d = decide(
      plainInput(i.values.get(AMOUNT_ACTION)),
      plainInput(i.values.get(CURRENCY_ACTION)),
      i.activeStepIds,
    );
    if (d === "complete") expected.complete.push(i.id);
    else if (d === "abort") expected.abort.push(i.id);
  }
  w.completes = expected.complete.length;
  w.aborts = expected.abort.length;
  return { workload: w, expected };
}

/**
 * Entry of a child process that runs part of the benchmark, so that its peak resident set (getrusage) is its own
 * and not the sandbox's. flowrules runs as two children, one for `plan --out` and one for `apply plan.json`, as the
 * CLI does; the naive script is one child for both its phases. Protocol over the IPC channel of `fork`:
 *
 *   parent → child  { type: "run", job }
 *   child → parent  { type: "phase", phase }      naive only, after each phase; the child then waits for
 *   parent → child  { type: "ack" }               (the parent has cut the request log there)
 *   child → parent  { type: "result", output } | { type: "error", message }
 */
import type { ApplyStepResult, FlowrulesSideOptions, PlanStepResult } from "./flowrules.js";
import type { PhaseName, SideResult } from "./side.js";
import type { StateApplyOptions, StateApplyResult, StatePlanOptions, StatePlanResult } from "./state.js";
import { preferSmallHeap } from "#flowrules/cli/heap.js";

export type ChildJob =
  | { kind: "naive"; baseUrl: string }
  | { kind: "flowrules-plan"; options: FlowrulesSideOptions }
  | { kind: "flowrules-apply"; options: FlowrulesSideOptions }
  | { kind: "state-plan"; options: StatePlanOptions }
  | { kind: "state-apply"; options: StateApplyOptions };

export type ChildOutput =
  | { kind: "naive"; result: SideResult }
  | { kind: "flowrules-plan"; result: PlanStepResult }
  | { kind: "flowrules-apply"; result: ApplyStepResult }
  | { kind: "state-plan"; result: StatePlanResult }
  | { kind: "state-apply"; result: StateApplyResult };

export type ToChild = { type: "run"; job: ChildJob } | { type: "ack" };
export type FromChild =
  { type: "phase"; phase: PhaseName } | { type: "result"; output: ChildOutput } | { type: "error"; message: string };

function send(msg: FromChild): void {
  process.send?.(msg);
}

let ackWaiter: (() => void) | undefined;

function phaseHook(phase: PhaseName): Promise<void> {
  return new Promise((resolve) => {
    ackWaiter = resolve;
    send({ type: "phase", phase });
  });
}

// each job loads only its own code: the naive script's memory must not include the engine's modules
async function execute(job: ChildJob): Promise<ChildOutput> {
  // flowrules' processes run with the heap setting its CLI gives itself (src/cli/heap.ts); the naive script without
  if (job.kind !== "naive") preferSmallHeap();
  switch (job.kind) {
    case "naive":
      return { kind: "naive", result: await (await import("./naive.js")).runNaive(job.baseUrl, phaseHook) };
    case "flowrules-plan":
      return { kind: "flowrules-plan", result: await (await import("./flowrules.js")).planStep(job.options) };
    case "flowrules-apply":
      return { kind: "flowrules-apply", result: await (await import("./flowrules.js")).applyStep(job.options) };
    case "state-plan":
      return { kind: "state-plan", result: await (await import("./state.js")).statePlanStep(job.options) };
    case "state-apply":
      return { kind: "state-apply", result: await (await import("./state.js")).stateApplyStep(job.options) };
  }
}

async function run(job: ChildJob): Promise<void> {
  try {
    send({ type: "result", output: await execute(job) });
  } catch (err) {
    send({ type: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
  process.disconnect?.();
}

process.on("message", (msg: ToChild) => {
  if (msg.type === "ack") {
    const w = ackWaiter;
    ackWaiter = undefined;
    w?.();
  } else if (msg.type === "run") {
    void run(msg.job);
  }
});

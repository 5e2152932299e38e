/**
 * Entry of the child process that runs one side of the benchmark, so that its peak resident set (getrusage) is its
 * own and not the sandbox's. Protocol over the IPC channel of `fork`:
 *
 *   parent → child  { type: "run", job }
 *   child → parent  { type: "phase", phase }      after each phase; the child waits for
 *   parent → child  { type: "ack" }               (the parent has cut the request log there)
 *   child → parent  { type: "result", result } | { type: "error", message }
 */
import type { PhaseName, SideName, SideResult } from "./side.js";

export interface ChildJob {
  side: SideName;
  baseUrl: string;
  concurrency: number;
  workDir: string;
  rulesYaml?: string;
}

export type ToChild = { type: "run"; job: ChildJob } | { type: "ack" };
export type FromChild =
  | { type: "phase"; phase: PhaseName }
  | { type: "result"; result: SideResult }
  | { type: "error"; message: string };

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

async function run(job: ChildJob): Promise<void> {
  try {
    // each side loads only its own code: the naive script's memory must not include the engine's modules
    const result =
      job.side === "naive"
        ? await (await import("./naive.js")).runNaive(job.baseUrl, phaseHook)
        : await (await import("./flowrules.js")).runFlowrules(
            { baseUrl: job.baseUrl, concurrency: job.concurrency, workDir: job.workDir, ...(job.rulesYaml ? { rulesYaml: job.rulesYaml } : {}) },
            phaseHook,
          );
    send({ type: "result", result });
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

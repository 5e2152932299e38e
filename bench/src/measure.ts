/**
 * Runs one side of the benchmark against a running sandbox and counts what it sent, phase by phase, from the
 * sandbox's request log (the server's view: every request that arrived, retries included).
 *
 * By default each side runs in child processes (child.ts) so its peak RSS is its own — flowrules as two, `plan --out`
 * then `apply plan.json`; `inProcess` runs it here (the test does, on tiny N), and the RSS figures then include the
 * sandbox and say so.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RequestLogEntry, RunningSandbox } from "#flowrules/sandbox/index.js";
import type { ChildJob, ChildOutput, FromChild, ToChild } from "./child.js";
import { runFlowrules, sideResult, type FlowrulesSideOptions } from "./flowrules.js";
import { runNaive } from "./naive.js";
import type { PhaseName, SideName, SideResult } from "./side.js";

export const REQUEST_KINDS = [
  "list",
  "field",
  "read",
  "complete_step",
  "bulk_abort",
  "processes",
  "structure",
  "other",
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface PhaseRequests {
  total: number;
  byKind: Record<RequestKind, number>;
  /** answers that were not 2xx */
  notOk: number;
}

export function classify(
  e: Pick<RequestLogEntry, "method" | "path"> & { query?: RequestLogEntry["query"] },
): RequestKind {
  const p = e.path.replace(/^\/api/, "");
  if (e.method === "GET") {
    // the newest instance of a workflow, listed to read its structure (plan checks rules against it)
    if (
      /^\/v2\/processes\/\d+\/instances\/?$/.test(p) &&
      e.query?.page_size === "1" &&
      e.query.ordering === "-started_time"
    )
      return "structure";
    if (/^\/v2\/processes\/\d+\/instances\/?$/.test(p)) return "list";
    if (/^\/processes\/\d+\/steps\/\d+\/actions\/\d+\/?$/.test(p)) return "field";
    if (/^\/instances\/\d+\/?$/.test(p)) return "read";
    if (/^\/processes\/?$/.test(p)) return "processes";
  } else if (e.method === "POST") {
    if (/^\/instances\/\d+\/complete_step\/?$/.test(p)) return "complete_step";
    if (/^\/instances\/bulk\/abort\/?$/.test(p)) return "bulk_abort";
  }
  return "other";
}

export function countRequests(
  entries: ReadonlyArray<Pick<RequestLogEntry, "method" | "path" | "status"> & { query?: RequestLogEntry["query"] }>,
): PhaseRequests {
  const byKind = Object.fromEntries(REQUEST_KINDS.map((k) => [k, 0])) as Record<RequestKind, number>;
  let notOk = 0;
  for (const e of entries) {
    byKind[classify(e)] += 1;
    if (e.status < 200 || e.status >= 300) notOk += 1;
  }
  return { total: entries.length, byKind, notOk };
}

export interface Measured {
  result: SideResult;
  requests: Record<PhaseName, PhaseRequests>;
  /** "child" when the RSS figures are the side's own processes; "in-process" when they include the sandbox */
  rssScope: "child" | "in-process";
}

/** What to run: one side, against one sandbox. */
export interface SideJob {
  side: SideName;
  options: FlowrulesSideOptions;
}

/** Takes the log of the phase that just ended and starts the next one afresh. */
function cutter(sb: RunningSandbox): {
  cut: (phase: PhaseName) => void;
  requests: () => Record<PhaseName, PhaseRequests>;
} {
  const taken: Partial<Record<PhaseName, PhaseRequests>> = {};
  return {
    cut: (phase) => {
      taken[phase] = countRequests(sb.requests());
      sb.clearRequests();
    },
    requests: () => ({ plan: taken.plan ?? countRequests([]), apply: taken.apply ?? countRequests([]) }),
  };
}

export async function measureSide(sb: RunningSandbox, job: SideJob, inProcess: boolean): Promise<Measured> {
  sb.clearRequests();
  const c = cutter(sb);
  if (inProcess) {
    const hook = (phase: PhaseName): Promise<void> => {
      c.cut(phase);
      return Promise.resolve();
    };
    const result =
      job.side === "naive" ? await runNaive(job.options.baseUrl, hook) : await runFlowrules(job.options, hook);
    return { result, requests: c.requests(), rssScope: "in-process" };
  }
  if (job.side === "naive") {
    const out = await inChild({ kind: "naive", baseUrl: job.options.baseUrl }, c.cut);
    if (out.kind !== "naive") throw new Error(`unexpected child output ${out.kind}`);
    return { result: out.result, requests: c.requests(), rssScope: "child" };
  }
  // `flowrules plan --out` and `flowrules apply plan.json`: two processes, as on the command line
  const plan = await inChild({ kind: "flowrules-plan", options: job.options }, c.cut);
  c.cut("plan");
  const apply = await inChild({ kind: "flowrules-apply", options: job.options }, c.cut);
  c.cut("apply");
  if (plan.kind !== "flowrules-plan" || apply.kind !== "flowrules-apply") throw new Error("unexpected child output");
  return { result: sideResult(plan.result, apply.result), requests: c.requests(), rssScope: "child" };
}

function inChild(job: ChildJob, cut: (phase: PhaseName) => void): Promise<ChildOutput> {
  const script = fileURLToPath(new URL("./child.js", import.meta.url));
  const child = fork(script, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise<ChildOutput>((resolve, reject) => {
    let settled = false;
    const settle = (f: () => void): void => {
      if (!settled) {
        settled = true;
        f();
      }
    };
    child.on("message", (msg: FromChild) => {
      if (msg.type === "phase") {
        cut(msg.phase);
        child.send({ type: "ack" } satisfies ToChild);
      } else if (msg.type === "result") {
        settle(() => resolve(msg.output));
      } else {
        settle(() => reject(new Error(`the ${job.kind} child failed: ${msg.message}`)));
      }
    });
    child.on("error", (err) => settle(() => reject(err)));
    child.on("exit", (code) =>
      settle(() => reject(new Error(`the ${job.kind} child exited (code ${code}) without a result`))),
    );
    child.send({ type: "run", job } satisfies ToChild);
  });
}

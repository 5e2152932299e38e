/**
 * Runs one side of the benchmark against a running sandbox and counts what it sent, phase by phase, from the
 * sandbox's request log (the server's view: every request that arrived, retries included).
 *
 * By default the side runs in a child process (child.ts) so its peak RSS is its own; `inProcess` runs it here (the
 * test does, on tiny N), in which case the RSS figures include the sandbox and say so.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RequestLogEntry, RunningSandbox } from "../sandbox/index.js";
import type { ChildJob, FromChild, ToChild } from "./child.js";
import { runFlowrules } from "./flowrules.js";
import { runNaive } from "./naive.js";
import type { PhaseName, SideResult } from "./side.js";

export const REQUEST_KINDS = ["list", "field", "read", "complete_step", "bulk_abort", "processes", "other"] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface PhaseRequests {
  total: number;
  byKind: Record<RequestKind, number>;
  /** answers that were not 2xx */
  notOk: number;
}

export function classify(e: Pick<RequestLogEntry, "method" | "path">): RequestKind {
  const p = e.path.replace(/^\/api/, "");
  if (e.method === "GET") {
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

export function countRequests(entries: ReadonlyArray<Pick<RequestLogEntry, "method" | "path" | "status">>): PhaseRequests {
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
  /** "child" when the RSS figures are the side's own process; "in-process" when they include the sandbox */
  rssScope: "child" | "in-process";
}

/** Takes the log of the phase that just ended and starts the next one afresh. */
function cutter(sb: RunningSandbox): { cut: (phase: PhaseName) => void; requests: Partial<Record<PhaseName, PhaseRequests>> } {
  const requests: Partial<Record<PhaseName, PhaseRequests>> = {};
  return {
    requests,
    cut: (phase) => {
      requests[phase] = countRequests(sb.requests());
      sb.clearRequests();
    },
  };
}

function complete(requests: Partial<Record<PhaseName, PhaseRequests>>): Record<PhaseName, PhaseRequests> {
  const empty = countRequests([]);
  return { plan: requests.plan ?? empty, apply: requests.apply ?? empty };
}

export async function measureSide(sb: RunningSandbox, job: ChildJob, inProcess: boolean): Promise<Measured> {
  sb.clearRequests();
  const c = cutter(sb);
  if (inProcess) {
    const hook = (phase: PhaseName): Promise<void> => {
      c.cut(phase);
      return Promise.resolve();
    };
    const result =
      job.side === "naive"
        ? await runNaive(job.baseUrl, hook)
        : await runFlowrules({ baseUrl: job.baseUrl, concurrency: job.concurrency, workDir: job.workDir, ...(job.rulesYaml ? { rulesYaml: job.rulesYaml } : {}) }, hook);
    return { result, requests: complete(c.requests), rssScope: "in-process" };
  }
  const result = await inChild(job, c.cut);
  return { result, requests: complete(c.requests), rssScope: "child" };
}

function inChild(job: ChildJob, cut: (phase: PhaseName) => void): Promise<SideResult> {
  const script = fileURLToPath(new URL("./child.js", import.meta.url));
  const child = fork(script, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise<SideResult>((resolve, reject) => {
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
        settle(() => resolve(msg.result));
      } else {
        settle(() => reject(new Error(`the ${job.side} side failed: ${msg.message}`)));
      }
    });
    child.on("error", (err) => settle(() => reject(err)));
    child.on("exit", (code) => settle(() => reject(new Error(`the ${job.side} child exited (code ${code}) without a result`))));
    child.send({ type: "run", job } satisfies ToChild);
  });
}

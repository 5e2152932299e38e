/**
 * The sandbox in a child process of the benchmark (./sandbox-child.ts), driven over IPC: its requests counted, its
 * clock moved, people's work simulated. How long it takes to start and what it holds are measured too.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { SandboxOptions } from "#flowrules/sandbox/index.js";

export type SandboxRequest =
  | { id: number; op: "count" | "clear" | "writes" | "now" | "close" }
  | {
      id: number;
      op: "simulate" | "advance";
      arg: unknown;
    };
export type SandboxReply = { id: number; value: unknown } | { id: number; error: string };

/** A process's peak resident set (VmHWM, MiB) from /proc; 0 when it is gone or not Linux. */
export async function vmHwmMb(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export class SandboxProcess {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
    /** instances it holds */
    readonly size: number,
    /** from the child's start of `startSandbox` to listening */
    readonly startMs: number,
  ) {
    child.on("message", (msg: SandboxReply) => {
      const w = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if ("error" in msg) w?.reject(new Error(`sandbox: ${msg.error}`));
      else w?.resolve(msg.value);
    });
  }

  static start(opts: Omit<SandboxOptions, "now"> & { now?: string }): Promise<SandboxProcess> {
    const script = fileURLToPath(new URL("./sandbox-child.js", import.meta.url));
    // a million instances hold ~1.8 GB: room above V8's default heap limit on small machines
    const child = fork(script, [JSON.stringify({ port: 0, ...opts })], {
      execArgv: ["--max-old-space-size=6144"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new Promise((resolve, reject) => {
      child.once("message", (msg: SandboxReply) => {
        if ("error" in msg) return reject(new Error(msg.error));
        const v = msg.value as { baseUrl: string; size: number; startMs: number };
        resolve(new SandboxProcess(child, v.baseUrl, v.size, v.startMs));
      });
      child.once("exit", (code) => reject(new Error(`the sandbox child exited (code ${code}) before it listened`)));
    });
  }

  private ask<T>(op: SandboxRequest["op"], arg?: unknown): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send(arg === undefined ? { id, op } : { id, op, arg });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** requests since the last clear */
  count(): Promise<number> {
    return this.ask("count");
  }
  clear(): Promise<void> {
    return this.ask("clear");
  }
  /** changes written since the last clear (a bulk abort counted by its ids) */
  writes(): Promise<number> {
    return this.ask("writes");
  }
  /** people's work: the number of instances changed */
  simulate(opts: { seed: number; churn: number }): Promise<number> {
    return this.ask("simulate", opts);
  }
  /** the clock moved forward; the new time (ISO) */
  advance(ms: number): Promise<string> {
    return this.ask("advance", ms);
  }
  now(): Promise<string> {
    return this.ask("now");
  }
  async close(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    await Promise.race([this.ask("close"), new Promise((r) => setTimeout(r, 5_000))]);
    this.child.kill("SIGKILL");
  }
}

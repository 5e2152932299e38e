/**
 * The built CLI run as a user runs it, as a child process of the benchmark: its peak resident set (VmHWM from /proc,
 * sampled until it exits), its wall time, the requests the sandbox counted, and optionally a signal sent once the
 * sandbox has counted a number of requests (a first sync cut short).
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { cliEnv } from "./scenario.js";
import { vmHwmMb } from "./sandbox-proc.js";

export const CLI = resolve("dist/cli/index.js");

export interface CliRun {
  requests: number;
  peakRssMb: number;
  wallS: number;
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** with `gc`: V8's heap by its own trace (`--trace-gc`) */
  gc?: GcSummary;
}

/** What `--trace-gc` says of a run: the most live after a full collection, the most the heap took, and when. */
export interface GcSummary {
  /** MB live after the largest mark-compact's collection */
  maxLiveMb: number;
  /** seconds into the run of that collection */
  atS: number;
  /** MB the heap had committed at most */
  maxCommittedMb: number;
  fullGcs: number;
}

/** `--trace-gc` lines: "[pid:0x…]  1234 ms: Mark-Compact 45.6 (50.2) -> 30.1 (52.0) MB, …". */
export function gcSummary(text: string): GcSummary | undefined {
  const re = /(\d+) ms: (Mark-Compact|Scavenge)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/g;
  let out: GcSummary | undefined;
  for (const m of text.matchAll(re)) {
    const [, ms, kind, , before, after, afterCommitted] = m;
    out ??= { maxLiveMb: 0, atS: 0, maxCommittedMb: 0, fullGcs: 0 };
    out.maxCommittedMb = Math.max(out.maxCommittedMb, Number(before), Number(afterCommitted));
    if (kind !== "Mark-Compact") continue;
    out.fullGcs++;
    if (Number(after) > out.maxLiveMb) {
      out.maxLiveMb = Number(after);
      out.atS = Number(ms) / 1000;
    }
  }
  return out;
}

/** What the runner needs of a sandbox: its URL and a count of the requests it answered. */
export interface Counted {
  baseUrl: string;
  /** requests since the last clear */
  count(): number | Promise<number>;
}

export async function runCli(
  sb: Counted,
  args: string[],
  o: {
    cwd?: string;
    stopAt?: { requests: number; signal: NodeJS.Signals };
    gc?: boolean;
    /** variables beside the scenario's (the image's glibc setting) */
    env?: Readonly<Record<string, string>>;
  } = {},
): Promise<CliRun> {
  const before = await sb.count();
  const t0 = Date.now();
  const child = spawn(process.execPath, [...(o.gc ? ["--trace-gc"] : []), CLI, ...args], {
    cwd: o.cwd,
    env: { ...cliEnv(sb.baseUrl, 0), ...o.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => out.push(d));
  child.stderr.on("data", (d: Buffer) => {
    // the last lines only (progress and warnings): a long run writes many
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  let peak = 0;
  let sent = false;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      peak = Math.max(peak, await vmHwmMb(child.pid));
      if (o.stopAt && !sent && (await sb.count()) - before >= o.stopAt.requests) {
        sent = true;
        child.kill(o.stopAt.signal);
      }
    })().finally(() => (busy = false));
  }, 25);
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((done) =>
    child.on("close", (code, signal) => done({ code, signal })),
  );
  clearInterval(timer);
  const stdout = Buffer.concat(out).toString();
  const gc = o.gc ? gcSummary(stdout) : undefined;
  return {
    requests: (await sb.count()) - before,
    peakRssMb: Math.round(peak),
    wallS: (Date.now() - t0) / 1000,
    code,
    signal,
    stdout,
    stderr,
    ...(gc ? { gc } : {}),
  };
}

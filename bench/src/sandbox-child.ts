/**
 * Entry of the sandbox as a child process of the benchmark (./sandbox-proc.ts starts it): a sandbox of a million
 * instances holds gigabytes and answers tens of thousands of requests, which must be neither in the benchmark's own
 * process (its timers poll while a run goes) nor in the runs it measures. Options come as JSON in argv[2]; requests
 * over the IPC channel: `{ id, op, arg }` → `{ id, value }` or `{ id, error }`.
 */
import { performance } from "node:perf_hooks";
import { startSandbox, type PeopleOptions, type SandboxOptions } from "#flowrules/sandbox/index.js";
import type { SandboxReply, SandboxRequest } from "./sandbox-proc.js";

const raw = JSON.parse(process.argv[2] ?? "{}") as Omit<SandboxOptions, "now"> & { now?: string };
const t0 = performance.now();
const sb = await startSandbox({ ...raw, now: raw.now === undefined ? undefined : new Date(raw.now) });
const send = (msg: SandboxReply): void => void process.send?.(msg);
send({
  id: 0,
  value: {
    baseUrl: sb.baseUrl,
    size: sb.store.size,
    startMs: performance.now() - t0,
    heapMb: process.memoryUsage().rss / 1048576,
  },
});

process.on("message", (msg: SandboxRequest) => {
  try {
    switch (msg.op) {
      case "count":
        return send({ id: msg.id, value: sb.requestCount() });
      case "clear":
        sb.clearRequests();
        return send({ id: msg.id, value: null });
      case "writes": {
        // writes answered 200, a bulk abort counted by its ids: the changes an apply made
        const n = sb
          .requests()
          .filter((r) => r.method === "POST" && r.status === 200)
          .reduce(
            (k, r) =>
              k + (r.path.endsWith("/bulk/abort") ? ((r.body as { ids?: number[] } | null)?.ids?.length ?? 0) : 1),
            0,
          );
        return send({ id: msg.id, value: n });
      }
      case "simulate":
        return send({ id: msg.id, value: sb.simulate(msg.arg as PeopleOptions).ids.length });
      case "advance":
        return send({ id: msg.id, value: sb.advanceClock(msg.arg as number).toISOString() });
      case "now":
        return send({ id: msg.id, value: sb.store.now().toISOString() });
      case "close":
        void sb.close().then(() => {
          send({ id: msg.id, value: null });
          process.disconnect?.();
        });
        return;
    }
  } catch (err) {
    send({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});

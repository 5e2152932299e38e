/**
 * Entry of a child process (run with --expose-gc) that opens a state file as a run does (`indexState`: read, checked,
 * MAC verified) and tells how long that took and what the index holds afterwards: the live heap and the typed arrays
 * after a full collection, less what was live before. argv[2]: the state file. Answers one message and exits.
 */
import { open } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { indexState } from "#flowrules/state/reader.js";
import { stateKey } from "#flowrules/state/mac.js";
import { setMappedSizes } from "#flowrules/model/mapped-buffers.js";
import { API_KEY } from "./scenario.js";

export interface IndexProbe {
  ms: number;
  /** live heap + array buffers held by the index, MiB */
  indexMb: number;
  heapMb: number;
  buffersMb: number;
  records: number;
  lines: number;
  authentic: boolean | undefined;
}

const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);
const live = (): { heap: number; buffers: number } => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
};

async function main(): Promise<IndexProbe> {
  // a large table's buffer counts as a whole 32 MB in arrayBuffers though only its written pages are memory
  // (src/model/mapped-buffers.ts): here every table gets a buffer of its own size, so the figure is what it holds
  setMappedSizes(Number.POSITIVE_INFINITY);
  const file = process.argv[2];
  if (!file) throw new Error("usage: index-probe.js STATE_FILE");
  const fh = await open(file, "r");
  const before = live();
  const t0 = performance.now();
  const index = await indexState(fh, { dirArg: file, key: stateKey(API_KEY) });
  const ms = performance.now() - t0;
  const after = live();
  const heap = after.heap - before.heap;
  const buffers = after.buffers - before.buffers;
  const result: IndexProbe = {
    ms,
    indexMb: (heap + buffers) / 1048576,
    heapMb: heap / 1048576,
    buffersMb: buffers / 1048576,
    records: index.records.size,
    lines: index.lineCount,
    authentic: index.authentic,
  };
  await index.close();
  return result;
}

main().then(
  (r) => {
    process.send?.(r);
    process.disconnect?.();
  },
  (err: unknown) => {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
    process.disconnect?.();
  },
);

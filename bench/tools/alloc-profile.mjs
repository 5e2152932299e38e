// Preload (`node --import ./bench/tools/alloc-profile.mjs …`): V8's sampling heap profile of every allocation,
// garbage included, between ALLOC_FROM and ALLOC_TO milliseconds after start (default: the whole run), written to
// ALLOC_OUT (default alloc-profile.json) when it stops or the process exits. Read it with ./alloc-summary.mjs.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";

const from = Number(process.env.ALLOC_FROM ?? 0);
const to = Number(process.env.ALLOC_TO ?? Number.MAX_SAFE_INTEGER);
const out = process.env.ALLOC_OUT ?? "alloc-profile.json";
const session = new Session();
session.connect();
let on = false;
let done = false;
const start = () => {
  session.post("HeapProfiler.enable");
  session.post("HeapProfiler.startSampling", {
    samplingInterval: 65536,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  on = true;
};
const stop = () => {
  if (!on || done) return;
  done = true;
  // the main thread's session answers at once, so this also works in an exit handler
  session.post("HeapProfiler.stopSampling", (err, r) => {
    if (!err) writeFileSync(out, JSON.stringify(r.profile));
  });
};
if (from === 0) start();
else setTimeout(start, from).unref();
if (to < Number.MAX_SAFE_INTEGER) setTimeout(stop, to).unref();
process.on("exit", stop);

// Preload (`node --import ./bench/tools/memory-trace.mjs dist/cli/index.js …`): prints to stderr the process's
// memory each time its RSS has moved by more than 15 MB since the last line (sampled every 20 ms), in MB:
// `T<ms since start> rss= heapUsed= heapTotal= ext= ab=`. How the memory sections of docs/performance.md traced runs.
const t0 = Date.now();
let last = 0;
const mb = (n) => Math.trunc(n / 1e6);
setInterval(() => {
  const m = process.memoryUsage();
  const rss = mb(m.rss);
  if (Math.abs(rss - last) <= 15) return;
  last = rss;
  process.stderr.write(
    `T${Date.now() - t0} rss=${rss} heapUsed=${mb(m.heapUsed)} heapTotal=${mb(m.heapTotal)} ext=${mb(m.external)} ab=${mb(m.arrayBuffers)}\n`,
  );
}, 20).unref();

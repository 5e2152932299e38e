/**
 * flowrules asks V8 for a small heap (`--optimize-for-size`). A run's peak memory is set less by what it keeps than by
 * V8's sizing of its old generation, which on a machine with gigabytes lets it grow to about four times what is live
 * before a full collection (docs/performance.md, "Memory"); in a run with `--state` that reads 30,000 instances from
 * disk in two seconds, that was 250–280 MB for ~50 MB live at 100,000 instances. With this flag V8 grows the heap
 * conservatively: the same run peaks at ~150 MB for ~35 % more CPU time, which a run waiting on a rate-limited
 * service does not feel. Set at run time, that flag no longer sizes the young generation (V8 read it at start-up),
 * which then grows to 16 MB semi-spaces: `--semi-space-growth-factor=1` keeps it at its start-up size, as the flag
 * given at start-up would (a run with state at 100,000: 167–171 → 141–150 MB; docs/performance.md, "Memory").
 * A heap size of the user's own (`NODE_OPTIONS=--max-old-space-size=N`, or a heap flag given to node itself) turns
 * this off: V8 then sizes the heap its own way within that bound.
 *
 * `validate` and `test` keep V8's own sizing: they make no request, they are bound by the CPU (parsing YAML, compiling
 * JSONata), and the small heap doubles their CPU time — 20,000 rules validate in 7.4 s with it and 3.3 s without, at
 * 134 and 212 MB (docs/performance.md, "Many rules").
 */
import { setFlagsFromString } from "node:v8";

/** Flags that size the heap: when the user gave one, flowrules does not set its own. */
const HEAP_FLAG = /(^|\s)--(no-)?(optimize[-_]for[-_]size|max[-_]old[-_]space[-_]size|max[-_]semi[-_]space[-_]size)\b/;

/** Verbs bound by the CPU, without any request: V8 sizes their heap its own way. */
const CPU_BOUND_VERBS = new Set(["validate", "test"]);

/** Whether flowrules sets its heap flag, given Node's own arguments, NODE_OPTIONS and the CLI's arguments. */
export function wantsSmallHeap(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  args: readonly string[] = [],
): boolean {
  const verb = args.find((a) => !a.startsWith("-"));
  if (verb !== undefined && CPU_BOUND_VERBS.has(verb)) return false;
  return !HEAP_FLAG.test(execArgv.join(" ")) && !HEAP_FLAG.test(nodeOptions ?? "");
}

/** Sets `--optimize-for-size` unless the user sized the heap or the verb is bound by the CPU; returns whether it did. */
export function preferSmallHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
  args: readonly string[] = process.argv.slice(2),
): boolean {
  if (!wantsSmallHeap(execArgv, nodeOptions, args)) return false;
  // read by V8's heap at every collection, so it takes effect when set at run time (a bit of the start-up heap
  // was sized before it)
  setFlagsFromString("--optimize-for-size");
  // read whenever the young generation would grow: it stays at its start-up size
  setFlagsFromString("--semi-space-growth-factor=1");
  return true;
}

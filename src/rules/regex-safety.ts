/**
 * Regular expressions in rules run against instance data that anyone filling a form controls. A pattern such as
 * /(a+)+$/ backtracks exponentially: 30 characters hang the process, and JSONata's 1 s guard cannot interrupt a
 * regex (it only checks between evaluation steps). Two defences:
 *
 * - at run time, V8 switches a regex that backtracks excessively to its linear-time engine, when the pattern allows it
 *   (no backreferences or lookaround, no `i` flag) — enabled here, process-wide, as soon as rules are compiled;
 * - at validation, a pattern that engine cannot run and that repeats anything (+, *, {n,}) is an error.
 */
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
// lets linearTime() ask V8 whether its linear engine accepts a pattern (the `l` flag); changes nothing else
setFlagsFromString("--enable-experimental-regexp-engine");

/** Whether V8's linear-time engine can run this pattern (so a runaway match falls back to it). */
export function linearTime(re: RegExp): boolean {
  try {
    new RegExp(re.source, `${re.flags.replace(/l/g, "")}l`);
    return true;
  } catch {
    return false;
  }
}

/** Length of a repeating quantifier (`*`, `+`, `{n,}`, `{n,m}` with m > 1) at `i`, or 0. */
function repeatAt(source: string, i: number): number {
  const c = source[i];
  if (c === "*" || c === "+") return 1;
  if (c !== "{") return 0;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
  if (!m) return 0;
  const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
  return max > 1 ? m[0].length : 0;
}

/** Whether the pattern repeats anything (outside character classes and escapes). */
export function hasRepeat(source: string): boolean {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (repeatAt(source, i) > 0) return true;
  }
  return false;
}

/**
 * Why this regex may hang on some input, or undefined when it is safe to run: a pattern V8's linear engine can run is
 * safe (the fallback above); one it cannot run is safe only without repetition, since backtracking then stays bounded
 * by the pattern's length at each position.
 */
export function backtrackingRisk(re: RegExp): string | undefined {
  if (linearTime(re) || !hasRepeat(re.source)) return undefined;
  return re.flags.includes("i")
    ? "the i flag keeps a repeating pattern from running in linear time; match $lowercase(…) against a pattern without i instead"
    : "a repeating pattern with a backreference or lookaround cannot run in linear time";
}

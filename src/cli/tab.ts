/**
 * A completion Tab: the scripts call `flowrules __complete profiles|rules -- <the words typed>` and read the names it
 * prints, one a line. To tell the typed paths from flag values it needs the flags that take a value, of every verb;
 * the build writes them to value-flags.json beside this file (./write-value-flags.ts), so a Tab reads that table
 * instead of building the whole program: it loads this file, the names' reader and the YAML parser, nothing else
 * (docs/performance.md, "Start-up"). Without the table (a build that did not write it), `__complete` runs as a
 * commander verb (./completion.ts) with the same answer; test/cli/startup.test.ts checks the table is the program's.
 */
import { readFileSync } from "node:fs";

export const COMPLETE_VERB = "__complete";
export const LISTS = ["profiles", "rules"] as const;
export type CompletionListName = (typeof LISTS)[number];

export const VALUE_FLAGS_FILE = "value-flags.json";

/** Prints the names for the line typed; completion must never print an error into the user's command line. */
export async function printNames(
  list: CompletionListName,
  words: string[],
  valueFlags: ReadonlySet<string>,
): Promise<void> {
  try {
    const { completionNames, typedLine } = await import("../commands/complete.js");
    const names = await completionNames(list, process.env, typedLine(words, valueFlags));
    process.stdout.write(names.map((n) => `${n}\n`).join(""));
  } catch {
    // any problem is an empty list
    process.exitCode = 0;
  }
}

/** The value flags the build wrote, or undefined when there is no such table. */
function builtValueFlags(): Set<string> | undefined {
  try {
    const table: unknown = JSON.parse(readFileSync(new URL(VALUE_FLAGS_FILE, import.meta.url), "utf8"));
    return Array.isArray(table) && table.every((f) => typeof f === "string") ? new Set(table) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answers `__complete <list> [--] <words…>` (the arguments after the program name) from the built table; false when
 * it cannot (another verb, an unknown list, no table), and the program then runs as usual.
 */
export async function answerTab(args: readonly string[]): Promise<boolean> {
  const [verb, list, ...rest] = args;
  if (verb !== COMPLETE_VERB || !LISTS.some((l) => l === list)) return false;
  const valueFlags = builtValueFlags();
  if (!valueFlags) return false;
  await printNames(list as CompletionListName, rest[0] === "--" ? rest.slice(1) : rest, valueFlags);
  return true;
}

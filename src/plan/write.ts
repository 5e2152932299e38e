/**
 * The plan file's one writer (docs/design.md, "The JSON plan"): the plan with its digest, two-space indented, keys in
 * the schema's order, a newline at the end. `plan --out`, `apply --auto-approve` and the JSON view all take their
 * bytes from `planFileChunks`, so the file and the view cannot differ.
 */
import { withDigest } from "./digest.js";
import type { Plan, SignedPlan } from "./types.js";
import { arrayStreamer, gathered, objectStreamer } from "../text/json-pieces.js";
import { writeFileAtomic } from "../fs/write-file.js";

/**
 * Changes stringified at once. Each batch's text stays below V8's large-object size (~128 KB; a change is ~1.4 KB as
 * a two-byte string), so one still being written when a scavenge comes is copied, not promoted whole into the old
 * generation.
 */
const WRITE_BATCH = 50;
/** Report rows stringified at once: a row is a few columns (~100 bytes), the same bound as a batch of changes. */
const ROW_BATCH = 500;
/** A group's instance ids written at once: an id is a line of a dozen characters. */
const ID_BATCH = 2000;

// a report's groups list its instances again (each under every key it has): as long as the rows in ids
const groupStreamer = objectStreamer({ instance_ids: arrayStreamer(ID_BATCH) });
const reportStreamer = objectStreamer({ groups: arrayStreamer(1, groupStreamer), rows: arrayStreamer(ROW_BATCH) });
const planStreamer = objectStreamer({
  changes: arrayStreamer(WRITE_BATCH),
  reports: arrayStreamer(1, reportStreamer),
});

/**
 * The file's text in pieces (the same bytes as `JSON.stringify(signed, null, 2)` and a newline): a batch of changes,
 * a batch of a report's rows at a time, so a plan of 100,000 changes or a report of 250,000 rows is never held as one
 * string, and a reader that is slow (a pipe) holds the writer back instead of the plan queuing in memory. Characters
 * a terminal would act on are written as `\uNNNN` (src/text/visible-json.ts): the same values, shown by `cat
 * plan.json` without effect.
 */
export function* planFileChunks(signed: SignedPlan): Generator<string> {
  yield* gathered(
    (function* () {
      yield* planStreamer(signed, 0);
      yield "\n";
    })(),
  );
}

/** The whole file as one string (`show`, tests; a run writes planFileChunks instead). */
export function planFileText(plan: Plan): string {
  return [...planFileChunks(withDigest(plan))].join("");
}

/**
 * Writes the plan file and returns the plan as signed in it, through the atomic writer (src/fs/write-file.ts): a
 * plan that fails half-way (disk full, a crash) leaves the previous file whole, a symbolic link
 * has the file it leads to replaced, and a folder, device or FIFO at the path is refused in one line.
 */
export async function writePlanFile(file: string, plan: Plan, signed = withDigest(plan)): Promise<SignedPlan> {
  await writeFileAtomic(file, planFileChunks(signed));
  return signed;
}

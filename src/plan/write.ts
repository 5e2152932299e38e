/**
 * The plan file's one writer (docs/design.md, "The JSON plan"): the plan with its digest, two-space indented, keys in
 * the schema's order, a newline at the end. `plan --out`, `apply --auto-approve` and the JSON view all take their
 * bytes from `planFileChunks`, so the file and the view cannot differ.
 */
import { withDigest } from "./digest.js";
import type { Plan, SignedPlan } from "./types.js";
import { visibleJson } from "../text/visible-json.js";
import { writeFileAtomic } from "../fs/write-file.js";

const CHANGES_MARKER = "\u0001flowrules-changes\u0001";
const WRAP_HEAD = '{\n  "c": [\n';
const WRAP_TAIL = "\n  ]\n}";

/**
 * Changes stringified at once. Each batch's text stays below V8's large-object size (~128 KB; a change is ~1.4 KB as
 * a two-byte string), so one still being written when a scavenge comes is copied, not promoted whole into the old
 * generation.
 */
const WRITE_BATCH = 50;

/**
 * The file's text in pieces (the same bytes as `JSON.stringify(signed, null, 2)` and a newline), a batch of changes
 * at a time, so a plan of 100,000 changes is never held as one string. Characters a terminal would act on are
 * written as `\uNNNN` (src/text/visible-json.ts): the same values, shown by `cat plan.json` without effect.
 */
export function* planFileChunks(signed: SignedPlan): Generator<string> {
  const head = JSON.stringify({ ...signed, changes: CHANGES_MARKER }, null, 2);
  const at = head.indexOf(JSON.stringify(CHANGES_MARKER));
  if (signed.changes.length === 0) yield visibleJson(`${head.slice(0, at)}[]`);
  else {
    yield visibleJson(`${head.slice(0, at)}[\n`);
    for (let i = 0; i < signed.changes.length; i += WRITE_BATCH) {
      // inside `{ "c": [ … ] }` stringified with 2 spaces, the elements sit at the plan's own depth (4 spaces)
      const wrapped = JSON.stringify({ c: signed.changes.slice(i, i + WRITE_BATCH) }, null, 2);
      yield visibleJson(wrapped.slice(WRAP_HEAD.length, wrapped.length - WRAP_TAIL.length));
      yield i + WRITE_BATCH >= signed.changes.length ? "\n  ]" : ",\n";
    }
  }
  yield visibleJson(`${head.slice(at + JSON.stringify(CHANGES_MARKER).length)}\n`);
}

/** The whole file as one string: the JSON plan view. */
export function planFileText(plan: Plan): string {
  return [...planFileChunks(withDigest(plan))].join("");
}

/**
 * Writes the plan file and returns the plan as signed in it, through the atomic writer (src/fs/write-file.ts): a
 * plan that fails half-way (disk full, a crash) leaves the previous file whole, a symbolic link
 * has the file it leads to replaced, and a folder, device or FIFO at the path is refused in one line.
 */
export async function writePlanFile(file: string, plan: Plan): Promise<SignedPlan> {
  const signed = withDigest(plan);
  await writeFileAtomic(file, planFileChunks(signed));
  return signed;
}

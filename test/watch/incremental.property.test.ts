/**
 * The watcher's shortcuts are never the truth. After a cycle applied everything, people edit at random; then
 * - a poll that finds no update since the bookmark (src/watch/poll.ts) means the stateless plan has nothing
 *   to do (the rules here do not move with time), so skipping the cycle loses nothing;
 * - the cycle's plan with the state room (src/state), as the watcher makes it, equals the stateless plan —
 * over many random seeds and edit sequences, against the sandbox over HTTP.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { clientFrom } from "../../src/api/index.js";
import { planRuleSet } from "../../src/commands/plan.js";
import { loadRules } from "../../src/rules/index.js";
import { newestUpdate } from "../../src/watch/poll.js";
import type { Plan } from "../../src/plan/types.js";
import { captureIO, connection, MIXED_RULES, runApply, tempDir, writeRules } from "../apply/helpers.js";
import { personCompletes, runningAt } from "./helpers.js";

const WORKFLOWS = [1042, 1043, 1044];
let sb: RunningSandbox | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

type Edit =
  | { kind: "submit"; pick: number } // a claim reaches the manager step
  | { kind: "approve"; pick: number } // a manager approves by hand
  | { kind: "comment"; pick: number; text: string } // a purchase comment changes
  | { kind: "tag"; pick: number; workflow: number }; // any update that changes no rule's answer

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant("submit" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("approve" as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant("comment" as const),
    pick: fc.nat(),
    text: fc.constantFrom("Checked by flowrules", "needs a look", ""),
  }),
  fc.record({ kind: fc.constant("tag" as const), pick: fc.nat(), workflow: fc.constantFrom(...WORKFLOWS) }),
);

async function apply(s: RunningSandbox, e: Edit): Promise<void> {
  const from = (ids: number[]): number | undefined => (ids.length === 0 ? undefined : ids[e.pick % ids.length]);
  if (e.kind === "submit") {
    const id = from(runningAt(s, 1042, 20110));
    if (id !== undefined) await personCompletes(s, id, 20110);
  } else if (e.kind === "approve") {
    const id = from(runningAt(s, 1042, 20111));
    if (id !== undefined) await personCompletes(s, id, 20111);
  } else if (e.kind === "comment") {
    const id = from(runningAt(s, 1044, 20131));
    if (id !== undefined) s.store.setValue(id, 50264, { inputValue: e.text });
  } else {
    const id = from(s.store.ids(e.workflow));
    if (id !== undefined) s.store.update(id, (i) => void i.tags.push("touched"));
  }
}

/** What a plan would do, compared by meaning: change ids with their requests' bodies. */
function changes(plan: Plan): Array<[string, unknown]> {
  return plan.changes.map((c) => [c.id, c.request.body] as [string, unknown]).sort(([a], [b]) => (a < b ? -1 : 1));
}

describe("a watch cycle plans what a stateless plan plans; no update found means nothing to do", () => {
  it("after random people's edits, over many seeds", async () => {
    let withChanges = 0;
    let polledUpdates = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10_000 }),
        fc.array(edit, { minLength: 0, maxLength: 8 }),
        async (seed, edits) => {
          sb = await startSandbox({ port: 0, instances: 200, seed });
          const s = sb;
          const dir = await tempDir();
          dirs.push(dir);
          try {
            const file = await writeRules(dir, MIXED_RULES);
            const loaded = await loadRules([file]);
            if (!loaded.ruleSet) throw new Error("rules do not load");
            const state = join(dir, "state");
            // the first cycle: a plan with the state room (it writes the state), then everything applied
            expect(
              (await planRuleSet(loaded.ruleSet, connection(s), captureIO(), { quiet: true, state })).errors,
            ).toEqual([]);
            expect(await runApply(s, dir, { paths: [file], autoApprove: true, quiet: true })).not.toBe(1);
            // the bookmarks after it (the watcher's next cycle sees its own changes and moves them past)
            const client = clientFrom(connection(s));
            const bookmarks = new Map<number, string>();
            for (const pid of WORKFLOWS) {
              const newest = await newestUpdate(client, pid, undefined);
              if (newest) bookmarks.set(pid, newest.last_updated_time);
            }
            for (const e of edits) await apply(s, e);
            let updated = false;
            for (const pid of WORKFLOWS) if (await newestUpdate(client, pid, bookmarks.get(pid))) updated = true;
            await client.close();

            const now = new Date();
            const withState = await planRuleSet(loaded.ruleSet, connection(s), captureIO(), {
              quiet: true,
              now,
              state,
            });
            const stateless = await planRuleSet(loaded.ruleSet, connection(s), captureIO(), { quiet: true, now });
            expect(withState.errors).toEqual([]);
            expect(changes(withState)).toEqual(changes(stateless));
            if (!updated) expect(stateless.changes).toEqual([]);
            else polledUpdates += 1;
            if (stateless.changes.length > 0) withChanges += 1;
          } finally {
            await s.close();
            sb = undefined;
          }
        },
      ),
      // and always one run where nobody edits: its poll must find nothing
      { numRuns: 12, seed: 25, examples: [[7, []]] },
    );
    // the property says something: most runs had new work for the next cycle
    expect(withChanges).toBeGreaterThan(6);
    expect(polledUpdates).toBeLessThan(13); // the run without edits found no update
  }, 120_000);
});

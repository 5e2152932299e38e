/**
 * A first sync cut at random points and resumed, as users cut it (docs/operating.md, "A first sync over several
 * runs"): the built CLI as a child process, stopped by kill -9 or SIGTERM once a random share of a whole sync's
 * requests reached the sandbox, or by --max-duration after a random share of them; people's work between runs; then the same command run
 * to the end plans exactly what a stateless plan does. Seeds are few (every run is a process): the in-process
 * property (test/state/resume.test.ts) covers many more, with cuts at every request.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { compileSources } from "../../src/rules/index.js";
import { runCli, spawnCli, type CliResult } from "../helpers/cli.js";
import { cleanUp, tempDir } from "../helpers/temp.js";
import { comparable } from "../helpers/comparable-plan.js";
import { statelessPlan } from "./helpers.js";

/** a pinned clock: data far from every bound relative to the CLI's own now, so two runs seconds apart agree */
const START = new Date("2026-06-15T12:00:00.000Z");

/** Rules that read records (the bulk of a sync, and what checkpoints count), field values and list elements. */
const RULES = `version: 1
rules:
  - name: tagged-claims
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running] }
    when: '"expenses" in instance.tags'
    actions: [ { report: { group_by: priority, columns: [id, name, fields.amount] } } ]
  - name: approve-travel
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    when: 'fields.amount < 300 and "travel" in instance.tags'
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50231, value: { date: "2026-06-15" } } ] }
  - name: risky-access
    workflow: 1045
    fields: { risk: { step: 20141, action: 50272 } }
    select: { status: [running], active_step_id: 20141 }
    when: fields.risk > 7
    actions: [ { report: { group_by: status, columns: [id, name, fields.risk] } } ]
  - name: abort-stale
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P90D }
    actions: [ abort ]
`;

let dir: string;
let rules: string;
beforeAll(async () => {
  dir = await tempDir("flowrules-resume-property-");
  rules = join(dir, "rules.yaml");
  writeFileSync(rules, RULES);
});
afterAll(cleanUp);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Cut = "kill -9" | "SIGTERM" | "--max-duration";

/** One run of `plan --state`, cut as `cut` says once `share` of a whole sync's requests (or time) has passed. */
async function cutRun(
  sb: RunningSandbox,
  state: string,
  cut: Cut,
  share: number,
  whole: { requests: number },
): Promise<{ cut: boolean; result: CliResult }> {
  const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
  const args = ["plan", rules, "--format", "json", "--state", state];
  if (cut === "--max-duration") {
    // the shortest --max-duration is 1s, longer than a whole sync here: a key of R a minute lets ~0.95 R requests go
    // at once and then waits for its window, so the deadline falls after that share of the sync's requests
    const rate = Math.max(2, Math.round((share * whole.requests) / 0.95));
    const r = await runCli([...args, "--max-duration", "1s"], { ...env, FLOWRULES_RATE_LIMIT: String(rate) });
    return { cut: /ran out before the plan was complete/.test(r.stderr), result: r };
  }
  const before = sb.requests().length;
  const run = spawnCli(args, env);
  let exited = false;
  void run.done.then(() => (exited = true));
  const at = before + Math.max(1, Math.round(share * whole.requests));
  while (!exited && sb.requests().length < at) await sleep(2);
  if (!exited) run.child.kill(cut === "kill -9" ? "SIGKILL" : "SIGTERM");
  const r = await run.done;
  // a signal before the CLI set its handlers (at start-up) ends it as the signal does: cut before it read anything
  return { cut: r.signal !== null || /stopped before the plan was complete/.test(r.stderr), result: r };
}

describe("a first sync cut by real signals and deadlines at random points, then resumed", () => {
  it("plans what a stateless plan does (kill -9, SIGTERM, --max-duration; people's work between runs)", async () => {
    const loaded = compileSources([{ file: "rules.yaml", text: RULES }]);
    if (!loaded.ruleSet) throw new Error("the test's rules do not load");
    const ruleSet = loaded.ruleSet;
    let cuts = 0;
    const kinds = new Set<Cut>();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(
          fc.record({
            cut: fc.constantFrom<Cut>("kill -9", "SIGTERM", "--max-duration"),
            share: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
            changes: fc.integer({ min: 0, max: 6 }),
          }),
          { minLength: 1, maxLength: 2 },
        ),
        async (seed, runs) => {
          const sb = await startSandbox({ port: 0, instances: 1500, seed, now: START });
          const state = join(dir, `state-${seed}`);
          try {
            // how many requests a whole sync takes here: the scale of the random cut points
            const scale = { requests: (await statelessPlan(sb, ruleSet, START)).requests };
            for (const [n, r] of runs.entries()) {
              const got = await cutRun(sb, state, r.cut, r.share, scale);
              expect([0, 1, null], got.result.stderr).toContain(got.result.code);
              if (got.cut) {
                cuts++;
                kinds.add(r.cut);
              }
              sb.simulate({ seed: seed + n, changes: r.changes });
            }
            const env = {
              FLOWRULES_BASE_URL: sb.baseUrl,
              FLOWRULES_API_KEY: "sandbox-admin",
              FLOWRULES_RATE_LIMIT: "0",
            };
            const resumed = await runCli(["plan", rules, "--format", "json", "--state", state], env);
            expect(resumed.code, resumed.stderr).toBe(0);
            const stateless = await runCli(["plan", rules, "--format", "json"], env);
            expect(comparable(resumed.stdout)).toEqual(comparable(stateless.stdout));
          } finally {
            await sb.close();
          }
        },
      ),
      { numRuns: 3, seed: 4646 },
    );
    // the property ran on runs that were really cut, by each kind of cut
    expect(cuts).toBeGreaterThan(2);
    expect(kinds.size).toBe(3);
  }, 180_000);
});

/**
 * A first sync over several runs as users run it (docs/operating.md, "A first sync over several runs"): the built
 * CLI against the sandbox, stopped by `--max-duration`, by SIGTERM and by kill -9 in turn; each leaves a state the
 * next run continues from, and the run that finishes plans exactly what a stateless plan does.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { closeAfterAll, cleanUp, tempDir } from "../helpers/temp.js";
import { comparable } from "../helpers/comparable-plan.js";

const RULES = fileURLToPath(new URL("../../rules/", import.meta.url));
let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 3000, seed: 3, latencyMs: 2 }));
  dir = await tempDir("flowrules-resume-cli-");
});
afterAll(cleanUp);

const env = (rate: string): Record<string, string> => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: "sandbox-admin",
  FLOWRULES_RATE_LIMIT: rate,
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const checkpoints = (file: string): number =>
  existsSync(file) ? readFileSync(file, "utf8").split('{"checkpoint":').length - 1 : 0;

describe("a first sync over several runs", () => {
  it("--max-duration, SIGTERM and kill -9 each leave a state the next run continues; the last run plans as a stateless one", async () => {
    const state = join(dir, "state");
    const file = join(state, "state.jsonl");
    const args = ["plan", RULES, "--format", "json", "--state", state];

    // 1. kill -9 as soon as the first checkpoint is on disk: no goodbye at all
    // a key of 300 a minute: the client's window lets ~285 go at once (past the first checkpoint, 250 records), then
    // the run waits for the window, when it is killed
    const killed = spawnCli(args, env("300"));
    for (let i = 0; i < 800 && !existsSync(file); i++) await sleep(10);
    killed.child.kill("SIGKILL");
    const k = await killed.done;
    expect(k.signal).toBe("SIGKILL");
    expect(checkpoints(file)).toBeGreaterThan(0);
    expect(readFileSync(file, "utf8")).not.toContain('{"end":');

    // 2. a bounded run: no plan, exit 0, what it read kept, how far it got said in one line
    // a key of 60 a minute: what is left cannot be read in a second (the client's window lets ~57 go at once)
    const bounded = await runCli([...args, "--max-duration", "1s"], env("60"));
    expect(bounded.stderr).toMatch(/holds a partial sync/);
    expect(bounded.stderr).toMatch(
      /--max-duration 1s ran out before the plan was complete: no plan was made; the state keeps what was read \(synced [\d,]+ of ~[\d,]+ instances, ~[\d]+ (s|min|h \d+ min) left at [\d,]+ requests a minute\): the same command again continues/,
    );
    expect(bounded.code).toBe(0);
    expect(bounded.stdout).toBe("");
    expect(readFileSync(file, "utf8")).toMatch(/\{"checkpoint":[^\n]*\n$/);
    const afterBounded = readFileSync(file, "utf8");
    // `state show` says which workflows are partial and how far they got
    const shown = await runCli(["state", "show", "--state", state], env("0"));
    expect(shown.stdout).toMatch(/^\s+1042 +\S+ +partial: [\d,]+ of ~[\d,]+ /m);
    const requestsBefore = sb.requests().length;

    // 3. SIGTERM: the run says what it kept and the next one says what the state holds
    const termed = spawnCli(args, env("60"));
    // once it is reading (its start-up takes a moment on a loaded machine), well before the end of what is left
    const sent = sb.requests().length;
    for (let i = 0; i < 800 && sb.requests().length < sent + 8; i++) await sleep(25);
    termed.child.kill("SIGTERM");
    const t = await termed.done;
    expect(t.stderr).toMatch(
      /state: \S+ holds a partial sync \(synced [\d,]+ of ~[\d,]+ instances of 3 workflows\): this run reads the rest before it plans/,
    );
    expect(t.stderr).toMatch(
      /stopped before the plan was complete: no plan was made; the state keeps what was read \(synced [\d,]+ of/,
    );
    expect(t.stdout).toBe("");
    const afterTerm = readFileSync(file, "utf8");
    expect(afterTerm).not.toBe(afterBounded);
    expect(afterTerm.trimEnd().split("\n").at(-1)).toMatch(/^\{"checkpoint":/);

    // 4. the run that finishes: equal to a stateless plan at the same data, and cheaper than reading it all
    sb.clearRequests();
    const resumed = await runCli(args, env("0"));
    const resumedRequests = sb.requests().length;
    expect(resumed.stderr).toMatch(/holds a partial sync/);
    sb.clearRequests();
    const stateless = await runCli(["plan", RULES, "--format", "json"], env("0"));
    const full = sb.requests().length;
    expect(comparable(resumed.stdout)).toEqual(comparable(stateless.stdout));
    expect(resumedRequests).toBeLessThan(full);
    expect(requestsBefore).toBeGreaterThan(0);
    expect(readFileSync(file, "utf8")).toContain('{"end":');
  }, 60_000);
});

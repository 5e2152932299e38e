/**
 * The built CLI's `watch` as users run it, under real signals (docs/watch.md, "Signals" and "Reload"): SIGTERM at
 * each moment — waiting for a rate-limit slot, mid-listing, mid-apply, idle — exits 0 (the contract says within
 * 10 s; the harness only waits longer) with the lock released, and a next watcher starts healthy and sends nothing
 * twice; a watcher restarted after `kill -9` and stopped while it resumes exits 0 too; SIGHUP and edits on disk
 * reload the rules, and a broken edit keeps the old ones. One sandbox for the file; waits follow the child's lines.
 */
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdir, readFile, readlink, rename, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, spawnCli, type CliRun } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { effectiveMutations, posts } from "../apply/helpers.js";
import { APPROVE_RULES, stderrOf, until } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Generous: the contract is 10 s; a loaded machine may be slow to start a child, never to stop one. */
const WAIT = 30_000;

/** Completes the IT-setup step of workflow 1043: instances the approve rule (1042) never touches. */
const IT_SETUP_RULES = `version: 1
rules:
  - name: it-setup
    workflow: 1043
    select: { status: [running], active_step_id: 20121 }
    actions:
      - complete_step: { step: 20121, inputs: [] }
`;

/** Completes the access step of workflow 1045: the rule a reload adds. */
const ACCESS_RULE = `version: 1
rules:
  - name: grant-access
    workflow: 1045
    select: { status: [running], active_step_id: 20141 }
    actions:
      - complete_step: { step: 20141, inputs: [] }
`;

/** Completes the budget approval of workflow 1044, which no other test here touches. */
const BUDGET_RULE = `version: 1
rules:
  - name: approve-budget
    workflow: 1044
    select: { status: [running], active_step_id: 20131 }
    actions:
      - complete_step: { step: 20131, inputs: [] }
`;

/** Completes the finance review of workflow 1042 (the approve rule only moves claims to it): what a swap adds. */
const FINANCE_REVIEW_RULE = `  - name: finance-review
    workflow: 1042
    select: { status: [running], active_step_id: 20112 }
    actions:
      - complete_step: { step: 20112, inputs: [] }
`;

/** A folder as the kubelet mounts a ConfigMap: `x.yaml → ..data/x.yaml`, `..data → <stamp>`, the files in `<stamp>/`. */
async function configMapVolume(mount: string, stamp: string, files: Record<string, string>): Promise<void> {
  await mkdir(join(mount, stamp), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(mount, stamp, name), text);
  await symlink(stamp, join(mount, "..data"));
  for (const name of Object.keys(files)) await symlink(join("..data", name), join(mount, name));
}

/**
 * The kubelet's update of a ConfigMap volume (its atomic writer): the new files in a new timestamped folder, a link
 * `..data_tmp` to it renamed over `..data`, links for new keys, then the old folder removed.
 */
async function kubeletSwap(mount: string, stamp: string, files: Record<string, string>): Promise<void> {
  const old = await readlink(join(mount, "..data"));
  await mkdir(join(mount, stamp));
  for (const [name, text] of Object.entries(files)) await writeFile(join(mount, stamp, name), text);
  await symlink(stamp, join(mount, "..data_tmp"));
  await rename(join(mount, "..data_tmp"), join(mount, "..data"));
  for (const name of Object.keys(files))
    if (!existsSync(join(mount, name))) await symlink(join("..data", name), join(mount, name));
  await rm(join(mount, old), { recursive: true });
}

let sb: RunningSandbox;
const children: CliRun[] = [];

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "watch", "index.js"))) execSync("npm run build", { cwd: ROOT, stdio: "ignore" });
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 600, seed: 11 }));
}, 120_000);

afterEach(() => {
  for (const c of children.splice(0))
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
  sb.setFaults({ latencyMs: 0 });
});

function watcher(dir: string, args: string[], env: Record<string, string> = {}): CliRun & ReturnType<typeof stderrOf> {
  const run = spawnCli(
    ["watch", ...args, "--state", "state", "--interval", "1s"],
    {
      FLOWRULES_BASE_URL: sb.baseUrl,
      FLOWRULES_API_KEY: "sandbox-admin",
      FLOWRULES_RATE_LIMIT: "0",
      // test-only: polls faster than the 5 s floor (docs/watch.md)
      FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
      ...env,
    },
    { cwd: dir },
  );
  children.push(run);
  return { ...run, ...stderrOf(run.child) };
}

async function stopped(w: CliRun): Promise<{ code: number | null; stderr: string }> {
  w.child.kill("SIGTERM");
  const r = await w.done;
  return { code: r.code, stderr: r.stderr };
}

async function rulesDir(yaml: string): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), yaml);
  return dir;
}

/** The plan's listing of a workflow (not a poll, which asks for one element). */
const listing =
  (workflow: number) =>
  (r: { method: string; path: string; query: Record<string, string | string[]> }): boolean =>
    r.method === "GET" && r.path === `/api/v2/processes/${workflow}/instances/` && r.query.page_size !== "1";

describe("SIGTERM at any moment: exit 0, and the next watcher starts healthy", () => {
  it("while waiting for a rate-limit slot, and mid-listing: the cycle stops while planning, nothing applied", async () => {
    const dir = await rulesDir(APPROVE_RULES);
    // 5 a minute: the client allows itself 4, and the first cycle needs more, so it waits for the window
    const slow = watcher(dir, ["rules.yaml", "--apply"], { FLOWRULES_RATE_LIMIT: "5" });
    await slow.saw(/rate limit: 4 requests sent in the last 60 s, waiting [\d.]+ s for the window/, WAIT);
    const a = await stopped(slow);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toMatch(/cycle 1 \(first, 1 rule\): stopped while planning, nothing applied/);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);

    sb.setFaults({ latencyMs: 150 });
    sb.clearRequests();
    const listingNow = watcher(dir, ["rules.yaml", "--apply"]);
    await until(() => sb.requests().some(listing(1042)), WAIT, "the plan's listing");
    const b = await stopped(listingNow);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toMatch(/stopped while planning, nothing applied/);
    expect(posts(sb)).toEqual([]);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);
  }, 90_000);

  it("mid-apply: those in flight finish and are journalled; the next watcher applies the rest, nothing twice; idle: exit 0", async () => {
    const dir = await rulesDir(APPROVE_RULES);
    sb.setFaults({ latencyMs: 100 });
    sb.clearRequests();
    const first = watcher(dir, ["rules.yaml", "--apply"]);
    await until(() => posts(sb).length >= 3, WAIT, "the first changes");
    const a = await stopped(first);
    expect(a.code, a.stderr).toBe(0);
    const line =
      /cycle 1 \(first, 1 rule\): (\d+) planned, (\d+) applied, 0 stale, 0 failed, (\d+) not sent \(stopping\)/.exec(
        a.stderr,
      );
    expect(line, a.stderr).not.toBeNull();
    const [planned, applied, unsent] = (line ?? []).slice(1).map(Number);
    expect(applied).toBeGreaterThan(0);
    expect((applied ?? 0) + (unsent ?? 0)).toBe(planned);
    // every request that went out was answered and journalled: the journal's `done` lines are the POSTs answered 200
    expect(posts(sb).filter((p) => p.status === 200)).toHaveLength(applied ?? -1);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);

    sb.setFaults({ latencyMs: 0 });
    const next = watcher(dir, ["rules.yaml", "--apply"]);
    await next.saw(/cycle 1 \(first, 1 rule\): \d+ planned, \d+ applied, 0 stale, 0 failed;/, WAIT);
    expect(next.text()).toMatch(/^ {2}applied: rule approve-expenses, instance \d+, complete_step step 20111$/m);
    // meanwhile a second watcher on the same state dir refuses at once, in one line
    const second = await watcher(dir, ["rules.yaml", "--apply"]).done;
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr).toMatch(/another watcher uses the state dir state: .*pid \d+/);
    // idle now: it stops at once, the bookmarks written, the lock released
    const b = await stopped(next);
    expect(b.code, b.stderr).toBe(0);
    expect(existsSync(join(dir, "state", "watch", "bookmarks.json"))).toBe(true);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);
    expect(b.stderr).not.toContain("sandbox-admin");
    const counts = effectiveMutations(sb);
    expect(counts.size).toBe(planned);
    for (const [k, n] of counts) expect(n, k).toBe(1);
  }, 90_000);

  it("after kill -9, a new watcher stopped while it resumes the killed cycle exits 0; the one after catches up, nothing twice", async () => {
    const dir = await rulesDir(IT_SETUP_RULES);
    sb.setFaults({ latencyMs: 100 });
    sb.clearRequests();
    const killed = watcher(dir, ["rules.yaml", "--apply"]);
    await until(() => posts(sb).length >= 2, WAIT, "the first changes");
    killed.child.kill("SIGKILL");
    await killed.done;

    const resuming = watcher(dir, ["rules.yaml", "--apply"]);
    await resuming.saw(/resuming the unfinished cycle/, WAIT);
    const a = await stopped(resuming);
    expect(a.code, a.stderr).toBe(0);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);

    sb.setFaults({ latencyMs: 0 });
    const last = watcher(dir, ["rules.yaml", "--apply"]);
    await last.saw(/cycle \d+ \(first, 1 rule\): \d+ planned, \d+ applied, 0 stale, 0 failed;/, WAIT);
    const b = await stopped(last);
    expect(b.code, b.stderr).toBe(0);
    const running = sb.store
      .list(1043)
      .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20121));
    expect(running).toEqual([]);
    const counts = effectiveMutations(sb);
    expect(counts.size).toBeGreaterThan(2);
    for (const [k, n] of counts) expect(n, k).toBe(1);
  }, 90_000);
});

describe("reload", () => {
  it("a rule added on disk is applied by the cycle after the reload; a broken edit keeps the old rules, healthy; SIGHUP reloads", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "approve.yaml"), APPROVE_RULES);
    const w = watcher(dir, ["rules", "--apply", "--metrics-port", "0"]);
    const port = Number(
      /metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(await w.saw(/metrics on http:\/\/127\.0\.0\.1:\d+/, WAIT))?.[1],
    );
    await w.saw(/cycle 1 \(first, 1 rule\)/, WAIT);

    await writeFile(join(dir, "rules", "access.yaml"), ACCESS_RULE);
    await w.saw(/the rule files or the config file changed: reloaded 2 rules/, WAIT);
    // the new rule's changes are applied by the cycle that follows the reload
    await w.saw(/cycle \d+ \(reload, 2 rules\): ([1-9]\d*) planned, \1 applied, 0 stale, 0 failed/, WAIT);
    expect(w.text()).toMatch(/^ {2}applied: rule grant-access, instance \d+, complete_step step 20141$/m);
    expect(posts(sb).some((p) => (p.body as { step_id?: number } | null)?.step_id === 20141)).toBe(true);

    await writeFile(join(dir, "rules", "access.yaml"), `${ACCESS_RULE}    when: fields.nope ==\n`);
    await w.saw(
      /access\.yaml:\d+:\d+ +error +[^\n]+\n[\s\S]*the reload did not validate \(the problems are above\); keeping the 2 rules loaded before/,
      WAIT,
    );
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^flowrules_rules_reload_failures_total 1$/m);
    expect(metrics).toMatch(/^flowrules_rules_loaded 2$/m);
    expect(metrics).toMatch(/^flowrules_rules_info\{digest="[0-9a-f]{64}"\} 1$/m);

    // a Kubernetes-style swap: the file replaced by a rename, then SIGHUP asks again (nothing else changed since)
    await writeFile(join(dir, "rules", ".access.tmp"), ACCESS_RULE.replace("grant-access", "grant-access-2"));
    await rename(join(dir, "rules", ".access.tmp"), join(dir, "rules", "access.yaml"));
    await w.saw(/changed: reloaded 2 rules[\s\S]*changed: reloaded 2 rules/, WAIT);
    w.child.kill("SIGHUP");
    await w.saw(/SIGHUP: read again, unchanged: 2 rules/, WAIT);
    const r = await stopped(w);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/SIGHUP: stopping/);
  }, 90_000);

  it("a folder laid out as a ConfigMap mount: the swap of `..data` is seen by the fingerprint", async () => {
    const dir = await tempDir();
    const mount = join(dir, "rules");
    await mkdir(join(mount, "..2026_01_01_00_00_00.1"), { recursive: true });
    await writeFile(join(mount, "..2026_01_01_00_00_00.1", "approve.yaml"), APPROVE_RULES);
    await symlink("..2026_01_01_00_00_00.1", join(mount, "..data"));
    await symlink(join("..data", "approve.yaml"), join(mount, "approve.yaml"));
    const { fingerprint } = await import("../../src/watch/fingerprint.js");
    const before = await fingerprint([mount]);
    expect(await fingerprint([mount])).toBe(before);
    // kubelet: a new timestamped folder, a new link beside `..data`, renamed over it; the edit keeps the file's size
    // and modification time, and the link `approve.yaml` itself does not change: only where it leads does
    const old = join(mount, "..2026_01_01_00_00_00.1", "approve.yaml");
    const edited = join(mount, "..2026_01_01_00_01_00.2", "approve.yaml");
    await mkdir(dirname(edited));
    await writeFile(edited, (await readFile(old, "utf8")).replace("approve-expenses", "approve-expensez"));
    const { mtime, size } = await stat(old);
    await utimes(edited, mtime, mtime);
    expect((await stat(edited)).size).toBe(size);
    await symlink("..2026_01_01_00_01_00.2", join(mount, "..data_tmp"));
    const linkBefore = await lstat(join(mount, "approve.yaml"));
    await rename(join(mount, "..data_tmp"), join(mount, "..data"));
    expect(await lstat(join(mount, "approve.yaml"))).toEqual(linkBefore);
    const swapped = await fingerprint([mount]);
    expect(swapped).not.toBe(before);
    // the old folder's removal changes nothing that is read: no second reload
    await rm(dirname(old), { recursive: true });
    expect(await fingerprint([mount])).toBe(swapped);
  });

  it("a ConfigMap mount, as the watcher runs on it: it loads and applies; the kubelet's swap reloads; a swap to a broken rule keeps the old rules, healthy", async () => {
    const dir = await tempDir();
    const mount = join(dir, "rules");
    await configMapVolume(mount, "..2026_11_27_09_00_00.123456789", { "budget.yaml": BUDGET_RULE });
    const w = watcher(dir, ["rules", "--apply", "--metrics-port", "0"]);
    const port = Number(
      /metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(await w.saw(/metrics on http:\/\/127\.0\.0\.1:\d+/, WAIT))?.[1],
    );
    const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const gauge = (text: string, name: string): number => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    const digest = (text: string): string | undefined =>
      /^flowrules_rules_info\{digest="([0-9a-f]{64})"\} 1$/m.exec(text)?.[1];
    await w.saw(/cycle 1 \(first, 1 rule\): ([1-9]\d*) planned, \1 applied, 0 stale, 0 failed/, WAIT);
    expect(w.text()).toMatch(/^ {2}applied: rule approve-budget, instance \d+, complete_step step 20131$/m);
    const first = await metrics();
    expect(gauge(first, "flowrules_rules_reloads_total")).toBe(0);

    // the swap: the file `budget.yaml` (a link to `..data/budget.yaml`) now holds a second rule
    await kubeletSwap(mount, "..2026_11_27_09_05_00.987654321", { "budget.yaml": BUDGET_RULE + FINANCE_REVIEW_RULE });
    await w.saw(/the rule files or the config file changed: reloaded 2 rules/, WAIT);
    await w.saw(/cycle \d+ \(reload, 2 rules\): ([1-9]\d*) planned, \1 applied, 0 stale, 0 failed/, WAIT);
    expect(w.text()).toMatch(/^ {2}applied: rule finance-review, instance \d+, complete_step step 20112$/m);
    const second = await metrics();
    expect(gauge(second, "flowrules_rules_reloads_total")).toBeGreaterThanOrEqual(1);
    expect(gauge(second, "flowrules_rules_loaded")).toBe(2);
    expect(digest(second)).toMatch(/^[0-9a-f]{64}$/);
    expect(digest(second)).not.toBe(digest(first));

    // a swap to a broken rule: the two rules stay, the problem said in one line, counted once, healthy
    await kubeletSwap(mount, "..2026_11_27_09_10_00.555555555", {
      "budget.yaml": `${BUDGET_RULE + FINANCE_REVIEW_RULE}    when: fields.nope ==\n`,
    });
    await w.saw(/the reload did not validate \(the problems are above\); keeping the 2 rules loaded before/, WAIT);
    const third = await metrics();
    // once, unless a look fell between the kubelet's `..data_tmp` and its rename and read after it (then twice)
    const failures = gauge(third, "flowrules_rules_reload_failures_total");
    expect([1, 2]).toContain(failures);
    const problems = w
      .text()
      .split("\n")
      .filter((l) => /budget\.yaml:\d+:\d+/.test(l));
    expect(problems, w.text()).toHaveLength(failures);
    for (const line of problems) expect(line).toMatch(/budget\.yaml:\d+:\d+ +error +\S/);
    expect(gauge(third, "flowrules_rules_loaded")).toBe(2);
    expect(digest(third)).toBe(digest(second));
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const r = await stopped(w);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/cycle failed/);
  }, 90_000);
});

describe("a cycle whose plan a crash left truncated", () => {
  it("is set aside in one warning line naming the file, and the watcher goes on with a fresh cycle; history works with it present", async () => {
    const dir = await rulesDir(APPROVE_RULES);
    const folder = join(dir, "state", "watch", "cycles", "2026-11-27T09-00-00-000Z-4242-3");
    await mkdir(folder, { recursive: true });
    // cut off mid-change, as a crash or a full disk leaves it; no journal: the cycle never finished
    await writeFile(
      join(folder, "plan.json"),
      `{"format_version":1,"created_at":"2026-11-27T09:00:00.000Z","base_url":"${sb.baseUrl}","changes":[{"id":"c1","rule":"approve-expe`,
    );

    // history, with the cycle present: the others shown (none here), that one said in one line, exit 0
    const before = await runCli(["history", "--state", "state"], {}, { cwd: dir });
    expect(before.code, before.stderr).toBe(0);
    expect(before.stderr.trim().split("\n")).toHaveLength(1);
    expect(before.stderr).toMatch(
      /^flowrules: warning: cycle 2026-11-27T09-00-00-000Z-4242-3 left out: \S+plan\.json is not valid JSON/,
    );
    expect(before.stdout).toMatch(/^No cycle has applied anything in state/);

    const w = watcher(dir, ["rules.yaml", "--apply"]);
    await w.saw(/cycle 1 \(first, 1 rule\): \d+ planned, \d+ applied, 0 stale, 0 failed;/, WAIT);
    const warnings = w
      .text()
      .split("\n")
      .filter((l) => l.includes("plan.json"));
    expect(warnings, w.text()).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^flowrules: warning: cannot resume an unfinished cycle: \S+2026-11-27T09-00-00-000Z-4242-3\/plan\.json is not valid JSON \(.*\); set aside as \S+2026-11-27T09-00-00-000Z-4242-3\.corrupt, planning afresh$/,
    );
    expect(w.text()).not.toMatch(/resuming|cycle failed/);
    expect(existsSync(folder)).toBe(false);
    expect(existsSync(join(`${folder}.corrupt`, "plan.json"))).toBe(true);
    const r = await stopped(w);
    expect(r.code, r.stderr).toBe(0);

    // the next watcher does not meet it again; history says nothing of it
    const next = watcher(dir, ["rules.yaml", "--apply"]);
    // its resume comes before this line: it found nothing to resume
    await next.saw(/watching 1 rule/, WAIT);
    const r2 = await stopped(next);
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stderr).not.toMatch(/plan\.json|set aside/);
    const after = await runCli(["history", "--state", "state", "--format", "json"], {}, { cwd: dir });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toBe("");
    expect(
      (JSON.parse(after.stdout) as { cycles: Array<{ folder: string }> }).cycles.map((c) => c.folder),
    ).not.toContain("2026-11-27T09-00-00-000Z-4242-3");
  }, 90_000);
});

/**
 * The watch scenario (`--watch-sizes`, issue 25): `flowrules watch --apply` as it runs in production — the built CLI
 * as a child process, the sandbox enforcing 100 requests a minute (real minutes, not scaled) with 20 ms latency —
 * on one rule per demo workflow (the sandbox has four). Per N:
 *
 *   1. the first cycle (it builds the state), which applies what people marked before the watcher started;
 *   1b. the 45 s after it: the polls, and nothing more (issue 33: the watcher's own writes are not updates to
 *      react to; target: at most 20 requests);
 *   2. an idle phase with nobody working: requests a minute (target: at most 20 % of the limit);
 *   3. an events phase: every 15–35 s a person marks a waiting claim or onboarding `fast-track`, and the watcher
 *      must approve it; reaction = from the person's edit to the approval reaching the service (targets: median
 *      ≤ 15 s, 95th percentile ≤ 30 s);
 *   4. the watcher's resident set sampled every second over all of it (target: peak < 200 MB, not growing);
 *   5. SIGTERM: exit code and time to exit.
 *
 * A full hour is longer than a benchmark run here: the phases are minutes long (--watch-idle, --watch-events), and
 * the report says so.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import { cliEnv } from "./scenario.js";
import { Prng } from "#flowrules/sandbox/prng.js";
import type { ScenarioTarget } from "./results.js";

export const WATCH_SIZES = [20_000, 100_000];
export const WATCH_RATE_LIMIT = 100;
export const WATCH_BUDGET_PERCENT = 20;
const TAG = "fast-track";
/** Instances people marked before the watcher started: its first cycle applies them. */
export const WATCH_PREMARKED = 30;
/** The window after the first cycle whose requests are counted (issue 33: at most 20). */
export const AFTER_FIRST_MS = 45_000;

/** One rule per workflow: three act on instances people mark, one reads two fields of many and never matches. */
export const WATCH_RULES_YAML = `version: 1
rules:
  - name: w-fast-track-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111, tags: [${TAG}] }
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "Fast-tracked by flowrules" } } ] }
  - name: w-fast-track-it-setup
    workflow: 1043
    select: { status: [running], active_step_id: 20121, tags: [${TAG}] }
    actions:
      - complete_step: { step: 20121, inputs: [] }
  - name: w-huge-purchases
    workflow: 1044
    fields: { quantity: { step: 20130, action: 50261 }, price: { step: 20130, action: 50262 } }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity * fields.price > 1000000000000
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "Flagged by flowrules" } } ] }
  - name: w-fast-track-access
    workflow: 1045
    select: { status: [running], active_step_id: 20141, tags: [${TAG}] }
    actions:
      - complete_step: { step: 20141, inputs: [] }
`;

/** The steps people's marks wait at, per workflow (the rules above act on them). */
const MARKED: Array<{ workflow: number; step: number }> = [
  { workflow: 1042, step: 20111 },
  { workflow: 1043, step: 20121 },
];

export interface WatchRun {
  n: number;
  workflows: number;
  firstCycleS: number;
  firstCycleRequests: number;
  /** changes the first cycle applied (people's marks made before the watcher started) */
  firstApplied: number;
  /** requests in the 45 s after the first cycle ended */
  afterFirstRequests: number;
  idleSeconds: number;
  idleRequests: number;
  idlePerMin: number;
  eventsSeconds: number;
  events: number;
  reactionsS: number[];
  missed: number;
  medianS: number;
  p95S: number;
  /** applied more than once (from the request log): must be 0 */
  duplicates: number;
  status429: number;
  peakRssMb: number;
  /** peak RSS of the first and of the second half of the measured time */
  rssHalvesMb: [number, number];
  cycles: number;
  stopS: number;
  exitCode: number | null;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export async function rssMb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runWatchScenario(
  o: { seed: number; latencyMs: number; sizes: number[]; idleSeconds: number; eventsSeconds: number },
  log: (line: string) => void,
): Promise<WatchRun[]> {
  const cli = fileURLToPath(new URL("../../../dist/cli/index.js", import.meta.url));
  const runs: WatchRun[] = [];
  for (const n of o.sizes) {
    log(
      `watch scenario at N = ${n}: limit ${WATCH_RATE_LIMIT} a minute, ${o.latencyMs} ms latency, idle ${o.idleSeconds} s, events ${o.eventsSeconds} s`,
    );
    const sb: RunningSandbox = await startSandbox({
      port: 0,
      instances: n,
      seed: o.seed,
      latencyMs: o.latencyMs,
      rateLimitPerMin: WATCH_RATE_LIMIT,
    });
    const dir = await mkdtemp(join(tmpdir(), "flowrules-bench-watch-"));
    const random = Prng.fn(o.seed + 25);
    try {
      await writeFile(join(dir, "rules.yaml"), WATCH_RULES_YAML);
      // people marked some instances before the watcher started: its first cycle applies them
      for (let k = 0; k < WATCH_PREMARKED; k++) {
        const target = MARKED[k % MARKED.length];
        if (!target) continue;
        const waiting = sb.store
          .list(target.workflow)
          .filter(
            (i) =>
              i.abortedTime === null &&
              i.completedTime === null &&
              i.activeStepIds.includes(target.step) &&
              !i.tags.includes(TAG),
          );
        const pick = waiting[Math.floor(random() * waiting.length)];
        if (pick) sb.store.update(pick.id, (i) => void i.tags.push(TAG));
      }
      let firstEndedAt = 0;
      let firstRequests = 0;
      const started = Date.now();
      const child = spawn(
        process.execPath,
        [
          cli,
          "--log-format",
          "json",
          "watch",
          "rules.yaml",
          "--state",
          "state",
          "--apply",
          "--budget",
          String(WATCH_BUDGET_PERCENT),
        ],
        {
          cwd: dir,
          env: cliEnv(sb.baseUrl, WATCH_RATE_LIMIT),
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      const cycles: Array<{ at: number; fields: Record<string, unknown> }> = [];
      let buffered = "";
      child.stderr.on("data", (d: Buffer) => {
        buffered += d.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          try {
            const e = JSON.parse(line) as { event?: string };
            if (e.event === "watch.cycle") {
              // the first cycle's requests, then the log cleared at once: the window after it starts here
              if (cycles.length === 0) {
                firstRequests = sb.requests().length;
                sb.clearRequests();
                firstEndedAt = Date.now();
              }
              cycles.push({ at: Date.now(), fields: e as Record<string, unknown> });
            }
          } catch {
            // not an event line
          }
        }
      });
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
      const rss: Array<{ at: number; mb: number }> = [];
      const sampler = setInterval(() => {
        if (child.pid !== undefined)
          void rssMb(child.pid).then((mb) => mb !== undefined && rss.push({ at: Date.now(), mb }));
      }, 1000);
      try {
        // 1. the first cycle
        while (cycles.length === 0) {
          if (child.exitCode !== null) throw new Error(`the watcher exited (${child.exitCode}) before its first cycle`);
          if (Date.now() - started > 30 * 60_000) throw new Error("no first cycle within 30 minutes");
          await sleep(200);
        }
        const firstCycleS = ((cycles[0]?.at ?? Date.now()) - started) / 1000;
        const firstCycleRequests = firstRequests;
        const firstApplied = Number(cycles[0]?.fields.applied ?? 0);
        log(`  first cycle after ${firstCycleS.toFixed(1)} s, ${firstCycleRequests} requests, ${firstApplied} applied`);
        const measuredFrom = Date.now();

        // 1b. the 45 s after the first cycle: its own writes must not cost a re-read
        await sleep(Math.max(0, firstEndedAt + AFTER_FIRST_MS - Date.now()));
        const afterFirstRequests = sb
          .requests()
          .filter((r) => Date.parse(r.at) <= firstEndedAt + AFTER_FIRST_MS).length;
        log(
          `  the ${AFTER_FIRST_MS / 1000} s after the first cycle: ${afterFirstRequests} requests, ${cycles.length - 1} more cycles`,
        );

        // 2. idle
        sb.clearRequests();
        const idleStart = Date.now();
        await sleep(o.idleSeconds * 1000);
        const idleRequests = sb.requests().length;
        const idleSeconds = (Date.now() - idleStart) / 1000;
        const idlePerMin = (idleRequests * 60) / idleSeconds;
        log(
          `  idle: ${idleRequests} requests in ${idleSeconds.toFixed(0)} s = ${idlePerMin.toFixed(1)} a minute (budget ${(WATCH_RATE_LIMIT * WATCH_BUDGET_PERCENT) / 100})`,
        );

        // 3. people mark instances; the watcher approves them
        const marks: Array<{ id: number; step: number; at: number }> = [];
        const eventsStart = Date.now();
        while (Date.now() - eventsStart < o.eventsSeconds * 1000) {
          const target = MARKED[marks.length % MARKED.length];
          if (target) {
            const waiting = sb.store
              .list(target.workflow)
              .filter(
                (i) =>
                  i.abortedTime === null &&
                  i.completedTime === null &&
                  i.activeStepIds.includes(target.step) &&
                  !i.tags.includes(TAG),
              );
            const pick = waiting[Math.floor(random() * waiting.length)];
            if (pick) {
              sb.store.update(pick.id, (i) => void i.tags.push(TAG));
              marks.push({ id: pick.id, step: target.step, at: Date.now() });
            }
          }
          // about two marks a minute: each costs a cycle (and the cycle after it, which sees the watcher's own
          // change) of 10–20 requests, so a 100-a-minute key sustains a few a minute beside the polls
          await sleep(15_000 + random() * 20_000);
        }
        const eventsSeconds = (Date.now() - eventsStart) / 1000;
        const approvedAt = (m: { id: number; step: number; at: number }): number | undefined => {
          const hit = sb
            .requests()
            .find(
              (r) =>
                r.method === "POST" &&
                r.path.endsWith(`/instances/${m.id}/complete_step/`) &&
                r.status === 200 &&
                (r.body as { step_id?: number } | null)?.step_id === m.step,
            );
          return hit ? Date.parse(hit.at) : undefined;
        };
        const waitUntil = Date.now() + 90_000;
        while (marks.some((m) => approvedAt(m) === undefined) && Date.now() < waitUntil) await sleep(500);
        const reactionsS = marks.flatMap((m) => {
          const t = approvedAt(m);
          return t === undefined ? [] : [(t - m.at) / 1000];
        });
        const sorted = [...reactionsS].sort((a, b) => a - b);
        const posts = sb.requests().filter((r) => r.method === "POST" && r.status === 200);
        const perKey = new Map<string, number>();
        for (const r of posts) {
          const k = `${r.path}:${(r.body as { step_id?: number } | null)?.step_id ?? ""}`;
          perKey.set(k, (perKey.get(k) ?? 0) + 1);
        }
        const duplicates = [...perKey.values()].filter((c) => c > 1).length;
        const status429 = sb.requests().filter((r) => r.status === 429).length;
        log(
          `  events: ${marks.length} marks in ${eventsSeconds.toFixed(0)} s; reaction median ${quantile(sorted, 0.5).toFixed(1)} s, p95 ${quantile(sorted, 0.95).toFixed(1)} s, ${marks.length - reactionsS.length} missed, ${duplicates} sent twice, ${status429} answered 429`,
        );

        // 5. SIGTERM
        const stopAt = Date.now();
        child.kill("SIGTERM");
        const exitCode = await exited;
        const stopS = (Date.now() - stopAt) / 1000;
        clearInterval(sampler);
        const measured = rss.filter((s) => s.at >= measuredFrom);
        const mid = measuredFrom + (stopAt - measuredFrom) / 2;
        const half = (a: typeof measured): number => Math.max(0, ...a.map((s) => s.mb));
        const run: WatchRun = {
          n,
          workflows: 4,
          firstCycleS,
          firstCycleRequests,
          firstApplied,
          afterFirstRequests,
          idleSeconds,
          idleRequests,
          idlePerMin,
          eventsSeconds,
          events: marks.length,
          reactionsS,
          missed: marks.length - reactionsS.length,
          medianS: quantile(sorted, 0.5),
          p95S: quantile(sorted, 0.95),
          duplicates,
          status429,
          peakRssMb: Math.max(0, ...rss.map((s) => s.mb)),
          rssHalvesMb: [half(measured.filter((s) => s.at < mid)), half(measured.filter((s) => s.at >= mid))],
          cycles: cycles.length,
          stopS,
          exitCode,
        };
        log(
          `  cycles: ${cycles.map((c) => `${String(c.fields.kind)} ${String(c.fields.requests)} req ${(Number(c.fields.duration_ms) / 1000).toFixed(1)} s`).join("; ")}`,
        );
        log(
          `  peak RSS ${run.peakRssMb.toFixed(0)} MB (halves ${run.rssHalvesMb.map((x) => x.toFixed(0)).join(" → ")} MB), ${run.cycles} cycles; SIGTERM: exit ${exitCode} after ${stopS.toFixed(1)} s`,
        );
        runs.push(run);
      } finally {
        clearInterval(sampler);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    } finally {
      await sb.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return runs;
}

export type WatchTarget = ScenarioTarget;

export function watchTargets(runs: WatchRun[]): WatchTarget[] {
  const out: WatchTarget[] = [];
  const budget = (WATCH_RATE_LIMIT * WATCH_BUDGET_PERCENT) / 100;
  for (const r of runs) {
    out.push({
      text: `N = ${r.n}: the ${AFTER_FIRST_MS / 1000} s after a first cycle that applied ${r.firstApplied} changes ≤ 20 requests`,
      measured: String(r.afterFirstRequests),
      met: r.afterFirstRequests <= 20 && r.firstApplied > 0,
    });
    const max = r.reactionsS.length > 0 ? Math.max(...r.reactionsS) : Number.NaN;
    out.push({
      text: `N = ${r.n}: instances that come to match applied within 20 s (median), 45 s (max)`,
      measured: `${r.medianS.toFixed(1)} s, ${max.toFixed(1)} s (${r.reactionsS.length} of ${r.events})`,
      met: r.medianS <= 20 && max <= 45 && r.missed === 0 && r.events >= 5,
    });
    out.push({
      text: `N = ${r.n}: idle requests a minute ≤ ${budget} (20 % of ${WATCH_RATE_LIMIT})`,
      measured: r.idlePerMin.toFixed(1),
      met: r.idlePerMin <= budget,
    });
    out.push({
      text: `N = ${r.n}: reaction median ≤ 15 s`,
      measured: `${r.medianS.toFixed(1)} s (${r.reactionsS.length} of ${r.events})`,
      met: r.medianS <= 15 && r.missed === 0,
    });
    out.push({
      text: `N = ${r.n}: reaction 95th percentile ≤ 30 s`,
      measured: `${r.p95S.toFixed(1)} s`,
      met: r.p95S <= 30 && r.missed === 0,
    });
    out.push({
      text: `N = ${r.n}: peak RSS < 200 MB, not growing`,
      measured: `${r.peakRssMb.toFixed(0)} MB (halves ${r.rssHalvesMb.map((x) => x.toFixed(0)).join(" → ")})`,
      met: r.peakRssMb < 200 && r.rssHalvesMb[1] <= r.rssHalvesMb[0] * 1.1,
    });
    out.push({
      text: `N = ${r.n}: nothing sent twice, no 429`,
      measured: `${r.duplicates} twice, ${r.status429} × 429`,
      met: r.duplicates === 0 && r.status429 === 0,
    });
    out.push({
      text: `N = ${r.n}: SIGTERM exits 0 within 10 s`,
      measured: `exit ${r.exitCode} in ${r.stopS.toFixed(1)} s`,
      met: r.exitCode === 0 && r.stopS <= 10,
    });
  }
  return out;
}

export function renderWatch(runs: WatchRun[]): string {
  const out = [
    "## Continuous automation (`watch --apply`)",
    "",
    `Real minutes, limit ${WATCH_RATE_LIMIT} a minute, ${runs[0]?.workflows ?? 4} workflows with rules (all the sandbox has). The phases last minutes, not the hour of the issue.`,
    "",
    "| N | first cycle | 45 s after it | idle requests/min | marks | reaction median | p95 | max | peak RSS | cycles |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of runs) {
    const max = r.reactionsS.length > 0 ? Math.max(...r.reactionsS) : Number.NaN;
    out.push(
      `| ${r.n} | ${r.firstCycleS.toFixed(1)} s, ${r.firstCycleRequests} req, ${r.firstApplied} applied | ${r.afterFirstRequests} req | ${r.idlePerMin.toFixed(1)} (${r.idleRequests} in ${r.idleSeconds.toFixed(0)} s) | ${r.events} | ${r.medianS.toFixed(1)} s | ${r.p95S.toFixed(1)} s | ${max.toFixed(1)} s | ${r.peakRssMb.toFixed(0)} MB | ${r.cycles} |`,
    );
  }
  out.push("", "| target | measured | met |", "|---|---|---|");
  for (const t of watchTargets(runs)) out.push(`| ${t.text} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`);
  return `${out.join("\n")}\n`;
}

/**
 * `npm run bench:soak`: an hour of `flowrules watch --apply` under faults (issue 34, docs/performance.md "An hour
 * under faults"). The built CLI as a child process, as it runs in production, against the sandbox with:
 *
 *   - 20,000 instances, a strict window of 100 requests a minute per key (429 beyond it), 3 % of requests answered
 *     503, 1 % of writes applied and then answered by closing the connection (the outcome unknown to the client);
 *   - people at work all along: a few changes every few seconds, drawn by the sandbox's own simulation (the one
 *     `flowrules sandbox --people N` runs; driven from here so it can stop for the final check);
 *   - marks to react to: every 15–35 s a person tags a waiting instance `fast-track`, which a rule completes;
 *   - two `kill -9` of the watcher (restarted a second later: it resumes from its journals) and one SIGHUP after a
 *     rule edit (the edit adds a rule, whose marks only a reloaded watcher reacts to).
 *
 * Measured: the reaction to each mark (mark → the complete_step that took effect), requests a minute, the watcher's
 * RSS at minutes 5, 30 and 60 (the last kill is before minute 30, so both are one process), mutations that took
 * effect twice (from the sandbox's request log: must be 0), and changes missed: after people stop, every instance
 * a rule still selects once the watcher has settled (from the sandbox's store: must be 0), plus marks never acted on.
 *
 *   npm run bench:soak -- [--minutes 60] [--instances 20000] [--people-per-min 12] [--cli dist/cli/index.js] [--out FILE]
 *
 * With `--busy`, a busy tenant's watcher instead (./soak-busy.ts): 2,000 instances, 10 minutes by default.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import { Prng, mixSeed } from "#flowrules/sandbox/prng.js";
import { cliEnv } from "./scenario.js";
import { quantile, rssMb, WATCH_RULES_YAML } from "./watch.js";
import { busyTargets, renderBusy, runBusy } from "./soak-busy.js";
import type { ScenarioTarget } from "./results.js";

const TAG = "fast-track";
const RATE_LIMIT = 100;

/** The watch scenario's rules (./watch.ts), one per workflow; the access rule is left out at the start. */
const ACCESS_RULE_AT = WATCH_RULES_YAML.indexOf("  - name: w-fast-track-access");
const RULES = WATCH_RULES_YAML.slice(0, ACCESS_RULE_AT);
/** The edit made before the SIGHUP: the access rule, for a fourth workflow, whose marks start after it. */
const ADDED_RULE = WATCH_RULES_YAML.slice(ACCESS_RULE_AT);

interface Target {
  workflow: number;
  step: number;
}
const BEFORE_EDIT: Target[] = [
  { workflow: 1042, step: 20111 },
  { workflow: 1043, step: 20121 },
];
const AFTER_EDIT: Target[] = [...BEFORE_EDIT, { workflow: 1045, step: 20141 }];

interface Mark extends Target {
  id: number;
  at: number;
  afterEdit: boolean;
}

export interface SoakOptions {
  minutes: number;
  instances: number;
  peoplePerMin: number;
  failRate: number;
  resetRate: number;
  seed: number;
  cli: string;
  /** minutes at which the watcher is killed with SIGKILL (and restarted a second later) */
  kills: number[];
  /** minute of the rule edit and SIGHUP */
  hup: number;
}

export interface SoakResult {
  options: SoakOptions;
  marks: number;
  reacted: number;
  /** a person changed the instance first (step completed, tag removed, aborted): nothing left to do */
  moot: number;
  missedMarks: number;
  /** instances a rule still selects after the watcher settled at the end */
  missedAtEnd: number;
  reactionMedianS: number;
  reactionP95S: number;
  /** reactions of the marks the added rule acts on (after the reload) */
  afterReload: { marks: number; reacted: number; medianS: number };
  requests: number;
  requestsPerMin: number;
  maxRequestsInAMinute: number;
  status: Record<string, number>;
  resets: number;
  duplicates: number;
  rssMb: { min5?: number; min30?: number; min60?: number; peak: number };
  rssGrowth30to60: number;
  cycles: number;
  reloads: number;
  reloadFailures: number;
  restarts: number;
  peopleChanges: number;
  stopS: number;
  exitCode: number | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Still selected by a rule that acts on marks: running, at the step, tagged. */
function selected(sb: RunningSandbox, t: Target): number[] {
  return sb.store
    .list(t.workflow)
    .filter(
      (i) =>
        i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(t.step) && i.tags.includes(TAG),
    )
    .map((i) => i.id);
}

const tookEffect = (r: { status: number; reset?: boolean }): boolean =>
  (r.status >= 200 && r.status < 300) || r.reset === true;

export async function runSoak(o: SoakOptions, log: (line: string) => void): Promise<SoakResult> {
  const minute = 60_000;
  const sb = await startSandbox({
    port: 0,
    instances: o.instances,
    seed: o.seed,
    rateLimitPerMin: RATE_LIMIT,
    failRate: o.failRate,
    resetRate: o.resetRate,
    latencyMs: 20,
  });
  const dir = await mkdtemp(join(tmpdir(), "flowrules-soak-"));
  const random = Prng.fn(o.seed + 34);
  const started = Date.now();
  const at = (min: number): number => started + min * minute;
  const events = { cycles: 0, reloads: 0, reloadFailures: 0 };
  let child: ChildProcess | undefined;
  let restarts = 0;
  const rss: Array<{ at: number; mb: number }> = [];
  const sampler = setInterval(
    () => void rssMb(child?.pid).then((mb) => mb !== undefined && rss.push({ at: Date.now(), mb })),
    1000,
  );
  const start = (): ChildProcess => {
    const c = spawn(
      process.execPath,
      [o.cli, "--log-format", "json", "watch", "rules.yaml", "--state", "state", "--apply"],
      {
        cwd: dir,
        env: cliEnv(sb.baseUrl, RATE_LIMIT),
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let buffered = "";
    c.stderr?.on("data", (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        try {
          const e = JSON.parse(line) as { event?: string };
          if (e.event === "watch.cycle") events.cycles += 1;
          else if (e.event === "watch.reloaded") events.reloads += 1;
          else if (e.event === "watch.reload_failed") events.reloadFailures += 1;
        } catch {
          log(`  watcher: ${line}`);
        }
      }
    });
    return c;
  };
  const exited = (c: ChildProcess): Promise<number | null> =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve(c.exitCode)
      : new Promise((r) => c.once("close", (code) => r(code)));

  try {
    await writeFile(join(dir, "rules.yaml"), RULES);
    log(
      `soak: ${o.minutes} min, N = ${o.instances}, limit ${RATE_LIMIT} a minute, ${o.failRate * 100} % 503, ${o.resetRate * 100} % resets after a write, people ${o.peoplePerMin} a minute; kill -9 at minutes ${o.kills.join(", ")}, SIGHUP with a rule edit at minute ${o.hup}`,
    );
    child = start();

    const marks: Mark[] = [];
    let peopleChanges = 0;
    let round = 0;
    let nextMark = Date.now() + 60_000;
    let edited = false;
    const kills = [...o.kills];
    let lastReport = Date.now();
    const peopleUntil = at(o.minutes - 4);
    const marksUntil = at(o.minutes - 5);
    // people at work: a round every 3 s, the fraction carried, as `sandbox --people` does
    let owed = 0;
    while (Date.now() < peopleUntil) {
      await sleep(3000);
      owed += (o.peoplePerMin * 3) / 60;
      const n = Math.floor(owed);
      owed -= n;
      if (n > 0) peopleChanges += sb.simulate({ seed: mixSeed(o.seed, ++round), changes: n }).ids.length;
      const now = Date.now();
      if (now >= nextMark && now < marksUntil) {
        const targets = edited ? AFTER_EDIT : BEFORE_EDIT;
        const t = targets[marks.length % targets.length] as Target;
        const waiting = sb.store
          .list(t.workflow)
          .filter(
            (i) =>
              i.abortedTime === null &&
              i.completedTime === null &&
              i.activeStepIds.includes(t.step) &&
              !i.tags.includes(TAG),
          );
        const pick = waiting[Math.floor(random() * waiting.length)];
        if (pick) {
          sb.store.update(pick.id, (i) => void i.tags.push(TAG));
          marks.push({ ...t, id: pick.id, at: Date.now(), afterEdit: edited && t.workflow === 1045 });
        }
        nextMark = now + 15_000 + random() * 20_000;
      }
      if (kills.length > 0 && now >= at(kills[0] ?? Infinity)) {
        kills.shift();
        child.kill("SIGKILL");
        await exited(child);
        await sleep(1000);
        child = start();
        restarts += 1;
        log(`  minute ${((Date.now() - started) / minute).toFixed(1)}: kill -9, restarted`);
      }
      if (!edited && now >= at(o.hup)) {
        edited = true;
        await writeFile(join(dir, "rules.yaml"), RULES + ADDED_RULE);
        child.kill("SIGHUP");
        log(`  minute ${((Date.now() - started) / minute).toFixed(1)}: rule added, SIGHUP`);
      }
      if (now - lastReport >= 5 * minute) {
        lastReport = now;
        const last = rss.at(-1)?.mb;
        log(
          `  minute ${((now - started) / minute).toFixed(0)}: ${sb.requests().length} requests, ${events.cycles} cycles, ${marks.length} marks, RSS ${last?.toFixed(0) ?? "?"} MB`,
        );
      }
    }
    // people stopped: the watcher settles; every instance the rules select is acted on within a few intervals
    const settleUntil = at(o.minutes);
    const allSelected = (): number[] => AFTER_EDIT.flatMap((t) => selected(sb, t));
    while (Date.now() < settleUntil) await sleep(2000);
    const missedAtEnd = allSelected().length;

    const stopAt = Date.now();
    child.kill("SIGTERM");
    const exitCode = await exited(child);
    const stopS = (Date.now() - stopAt) / 1000;
    clearInterval(sampler);

    const requests = sb.requests();
    const firstEffect = new Map<string, number>();
    const effective = new Map<string, number>();
    for (const r of requests) {
      if (r.method !== "POST" || !tookEffect(r)) continue;
      const m = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
      const body = r.body as { step_id?: number; mode?: string } | null;
      if (!m) continue;
      const key = `${body?.mode ?? "complete"}:${m[1]}:${body?.step_id}`;
      effective.set(key, (effective.get(key) ?? 0) + 1);
      if (!firstEffect.has(key)) firstEffect.set(key, Date.parse(r.at));
    }
    const reactions: number[] = [];
    const afterReload: number[] = [];
    let moot = 0;
    let missedMarks = 0;
    for (const m of marks) {
      const t = firstEffect.get(`complete:${m.id}:${m.step}`);
      if (t !== undefined && t >= m.at) {
        reactions.push((t - m.at) / 1000);
        if (m.afterEdit) afterReload.push((t - m.at) / 1000);
      } else if (selected(sb, m).includes(m.id)) missedMarks += 1;
      else moot += 1;
    }
    const sorted = [...reactions].sort((a, b) => a - b);
    const status: Record<string, number> = {};
    for (const r of requests) status[String(r.status)] = (status[String(r.status)] ?? 0) + 1;
    const perMinute = new Map<number, number>();
    for (const r of requests) {
      const k = Math.floor((Date.parse(r.at) - started) / minute);
      perMinute.set(k, (perMinute.get(k) ?? 0) + 1);
    }
    const near = (min: number): number | undefined => {
      const target = at(min);
      let best: { at: number; mb: number } | undefined;
      for (const s of rss) if (!best || Math.abs(s.at - target) < Math.abs(best.at - target)) best = s;
      return best && Math.abs(best.at - target) < 30_000 ? best.mb : undefined;
    };
    const min30 = near(30);
    // minute 60 is the settled end, just before the SIGTERM
    const min60 = rss.filter((s) => s.at <= stopAt).at(-1)?.mb;
    const sortedAfter = [...afterReload].sort((a, b) => a - b);
    return {
      options: o,
      marks: marks.length,
      reacted: reactions.length,
      moot,
      missedMarks,
      missedAtEnd,
      reactionMedianS: quantile(sorted, 0.5),
      reactionP95S: quantile(sorted, 0.95),
      afterReload: {
        marks: marks.filter((m) => m.afterEdit).length,
        reacted: afterReload.length,
        medianS: quantile(sortedAfter, 0.5),
      },
      requests: requests.length,
      requestsPerMin: requests.length / ((stopAt - started) / minute),
      maxRequestsInAMinute: Math.max(0, ...perMinute.values()),
      status,
      resets: requests.filter((r) => r.reset === true).length,
      duplicates: [...effective.values()].filter((n) => n > 1).length,
      rssMb: {
        ...(near(5) !== undefined ? { min5: near(5) } : {}),
        ...(min30 !== undefined ? { min30 } : {}),
        ...(min60 !== undefined ? { min60 } : {}),
        peak: Math.max(0, ...rss.map((s) => s.mb)),
      },
      rssGrowth30to60: min30 !== undefined && min60 !== undefined ? min60 / min30 - 1 : Number.NaN,
      cycles: events.cycles,
      reloads: events.reloads,
      reloadFailures: events.reloadFailures,
      restarts,
      peopleChanges,
      stopS,
      exitCode,
    };
  } finally {
    clearInterval(sampler);
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await sb.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export type SoakTarget = ScenarioTarget;

/** The issue's targets: nothing twice, nothing missed, RSS not growing from minute 30 to 60, a clean stop. */
export function soakTargets(r: SoakResult): SoakTarget[] {
  const growth = r.rssGrowth30to60;
  return [
    { text: "mutations that took effect twice: 0", measured: String(r.duplicates), met: r.duplicates === 0 },
    {
      text: "changes missed: 0",
      measured: `${r.missedMarks} marks, ${r.missedAtEnd} still selected at the end`,
      met: r.missedMarks === 0 && r.missedAtEnd === 0,
    },
    {
      text: "the added rule acts after the SIGHUP",
      measured: `${r.afterReload.reacted} of ${r.afterReload.marks}`,
      met: r.afterReload.marks > 0 && r.afterReload.reacted + r.moot >= r.afterReload.marks,
    },
    {
      text: "RSS from minute 30 to 60: at most +10 %",
      measured: Number.isNaN(growth) ? "–" : `${(growth * 100).toFixed(1)} %`,
      met: !Number.isNaN(growth) && growth <= 0.1,
    },
    {
      text: "SIGTERM at the end: exit 0 within 10 s",
      measured: `exit ${r.exitCode} after ${r.stopS.toFixed(1)} s`,
      met: r.exitCode === 0 && r.stopS <= 10,
    },
  ];
}

export function renderSoak(r: SoakResult): string {
  const f = (x: number | undefined, d = 0): string => (x === undefined || Number.isNaN(x) ? "–" : x.toFixed(d));
  const lines = [
    "| measure | result |",
    "|---|---|",
    `| reaction to a mark, median / p95 | ${f(r.reactionMedianS, 1)} s / ${f(r.reactionP95S, 1)} s (${r.reacted} of ${r.marks} marks; ${r.moot} changed by people first) |`,
    `| reaction to the added rule's marks after the SIGHUP, median | ${f(r.afterReload.medianS, 1)} s (${r.afterReload.reacted} of ${r.afterReload.marks}) |`,
    `| requests a minute, mean / busiest minute | ${f(r.requestsPerMin, 1)} / ${r.maxRequestsInAMinute} (${r.requests} in all; by status ${Object.entries(
      r.status,
    )
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ")}) |`,
    `| RSS at minute 5 / 30 / 60, peak | ${f(r.rssMb.min5)} / ${f(r.rssMb.min30)} / ${f(r.rssMb.min60)} MB, peak ${f(r.rssMb.peak)} MB |`,
    `| writes answered by a reset (outcome unknown) | ${r.resets} |`,
    `| cycles, reloads (failed), restarts after kill -9, people's changes | ${r.cycles}, ${r.reloads} (${r.reloadFailures}), ${r.restarts}, ${r.peopleChanges} |`,
    "",
    "| target | measured | met |",
    "|---|---|---|",
    ...soakTargets(r).map((t) => `| ${t.text} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`),
  ];
  return `${lines.join("\n")}\n`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: "string" },
      instances: { type: "string" },
      "people-per-min": { type: "string" },
      seed: { type: "string" },
      cli: { type: "string" },
      out: { type: "string" },
      busy: { type: "boolean" },
      explain: { type: "string" },
    },
  });
  const cli = resolve(values.cli ?? fileURLToPath(new URL("../../../dist/cli/index.js", import.meta.url)));
  if (values.busy) {
    const minutes = Number(values.minutes ?? 10);
    if (!(minutes >= 2)) throw new Error("--minutes must be at least 2 with --busy");
    const busy = await runBusy(
      {
        minutes,
        instances: Number(values.instances ?? 2000),
        seed: Number(values.seed ?? 1),
        cli,
        ...(values.explain ? { explain: resolve(values.explain) } : {}),
      },
      (line) => void process.stderr.write(`${line}\n`),
    );
    process.stdout.write(renderBusy(busy));
    if (values.out) await writeFile(values.out, `${JSON.stringify(busy, null, 2)}\n`);
    return busyTargets(busy).every((t) => t.met) ? 0 : 1;
  }
  const minutes = Number(values.minutes ?? 60);
  if (!(minutes >= 8)) throw new Error("--minutes must be at least 8");
  const scale = (m: number): number => Math.round(((m * minutes) / 60) * 10) / 10;
  const o: SoakOptions = {
    minutes,
    instances: Number(values.instances ?? 20_000),
    peoplePerMin: Number(values["people-per-min"] ?? 12),
    failRate: 0.03,
    resetRate: 0.01,
    seed: Number(values.seed ?? 1),
    cli,
    // both kills before minute 30: minutes 30 and 60 are one process, so its RSS can be compared
    kills: [scale(12), scale(24)],
    hup: scale(36),
  };
  const result = await runSoak(o, (line) => void process.stderr.write(`${line}\n`));
  process.stdout.write(renderSoak(result));
  if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`);
  return soakTargets(result).every((t) => t.met) ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * `npm run bench:soak -- --busy`: a busy tenant's watcher (docs/performance.md, "A busy tenant"). The built CLI runs
 * `watch --apply --log-format json` as a child process against the sandbox with 2,000 instances and a strict window
 * of 100 requests a minute per key (429 beyond it), 20 ms latency, no faults. Once its first cycle is done, every
 * 30 s people change 5 random instances (the sandbox's own simulation) and make 2 expense claims newly match the
 * approval rule (amount under 100, EUR, tagged `expenses`, waiting at manager approval), for `--minutes` minutes;
 * the last minute nobody works (the watcher settles).
 *
 * Measured, from the sandbox's request log: the reaction to each newly matching claim (the person's change → our
 * complete_step landing), requests a minute over the measured time and their share of the key, claims handled
 * (N of N), mutations that took effect twice (must be 0), requests answered 429 (must be 0), and what the requests
 * were (lists by their question, record reads, form-field pages, writes) per cycle.
 *
 *   npm run bench:soak -- --busy [--minutes 10] [--instances 2000] [--seed 1] [--cli FILE] [--out FILE] [--explain FILE]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import type { RequestLogEntry } from "#flowrules/sandbox/request-log.js";
import { Prng, mixSeed } from "#flowrules/sandbox/prng.js";
import { cliEnv } from "./scenario.js";
import { quantile, WATCH_RULES_YAML } from "./watch.js";
import type { ScenarioTarget } from "./results.js";

const RATE_LIMIT = 100;
const ROUND_MS = 30_000;
const CHANGES_PER_ROUND = 5;
const MATCHES_PER_ROUND = 2;
const WORKFLOW = 1042;
const STEP = 20111;
const AMOUNT = 50222;
const CURRENCY = 50223;
const TAG = "expenses";

/** The approval rule people's changes make claims match, beside the watch scenario's rules of the other workflows. */
const APPROVAL_RULE = `  - name: approve-small-expenses
    workflow: ${WORKFLOW}
    fields: { amount: { step: ${STEP}, action: ${AMOUNT} }, currency: { step: ${STEP}, action: ${CURRENCY} } }
    select: { status: [running], active_step_id: ${STEP}, tags: [${TAG}] }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step: { step: ${STEP}, inputs: [ { action: 50230, value: { inputValue: "Approved by flowrules" } } ] }
`;
const OTHER_RULES = WATCH_RULES_YAML.slice(WATCH_RULES_YAML.indexOf("  - name: w-fast-track-it-setup"));
export const BUSY_RULES_YAML = `version: 1\nrules:\n${APPROVAL_RULE}${OTHER_RULES}`;

export interface BusyOptions {
  minutes: number;
  instances: number;
  seed: number;
  cli: string;
  /** write the watcher's events (`--explain-requests`: why each request was made) here, cycle by cycle */
  explain?: string;
}

export interface BusyResult {
  options: BusyOptions;
  firstCycleS: number;
  firstCycleRequests: number;
  matched: number;
  handled: number;
  /** a person changed the claim again first (it no longer matched): nothing left to do */
  moot: number;
  missed: number;
  reactionsS: number[];
  reactionMedianS: number;
  reactionP95S: number;
  requests: number;
  measuredS: number;
  requestsPerMin: number;
  keyPercent: number;
  duplicates: number;
  status429: number;
  cycles: number;
  /** requests of the measured time by what they asked */
  kinds: Record<string, number>;
  peopleChanges: number;
  exitCode: number | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const tookEffect = (r: { status: number; reset?: boolean }): boolean =>
  (r.status >= 200 && r.status < 300) || r.reset === true;

/** Running claims at manager approval the rule does not select: the ones a person can make match. */
function candidates(sb: RunningSandbox): number[] {
  return sb.store
    .list(WORKFLOW)
    .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(STEP))
    .filter((i) => !matches(sb, i.id))
    .map((i) => i.id);
}

function matches(sb: RunningSandbox, id: number): boolean {
  const i = sb.store.get(id);
  if (!i || i.abortedTime !== null || i.completedTime !== null || !i.activeStepIds.includes(STEP)) return false;
  const amount = (i.values.get(AMOUNT) as { inputValue?: unknown } | undefined)?.inputValue;
  const currency = (i.values.get(CURRENCY) as { inputValue?: { radioItemSelected?: unknown } } | undefined)?.inputValue
    ?.radioItemSelected;
  return i.tags.includes(TAG) && typeof amount === "number" && amount < 100 && currency === "EUR";
}

/** What a request asked, in words short enough for a table. */
export function requestKind(r: RequestLogEntry): string {
  if (r.method === "POST") return r.path.endsWith("/complete_step/") ? "complete_step" : "bulk abort";
  if (/\/actions\/\d+\/$/.test(r.path)) return "form-field page";
  if (/^\/api\/instances\/\d+\/$/.test(r.path))
    return r.query.inject_values === "true" ? "record read (with values)" : "record read (without values)";
  if (/\/instances\/$/.test(r.path)) {
    const keys = Object.keys(r.query).filter((k) => k !== "page_size" && k !== "cursor" && k !== "page");
    if (r.query.ordering === "-last_updated_time") return "list: poll (newest update)";
    if (keys.length === 1 && keys[0] === "last_updated_time_after") return "list: changes since the last run";
    if (keys.includes("last_updated_time_after") && keys.includes("last_updated_time_before"))
      return "list: our writes unchanged";
    return `list: ${keys.sort().join(",") || "all"}`;
  }
  return `${r.method} ${r.path.replace(/\d+/g, "N")}`;
}

/** A request in one line: what it asked and of what (ids kept: the benchmark's own sandbox, no key in it). */
function requestLine(r: RequestLogEntry): string {
  const q = Object.entries(r.query)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`)
    .join("&");
  return `${requestKind(r)}: ${r.method} ${r.path}${q ? `?${q}` : ""}`;
}

export async function runBusy(o: BusyOptions, log: (line: string) => void): Promise<BusyResult> {
  const sb = await startSandbox({
    port: 0,
    instances: o.instances,
    seed: o.seed,
    rateLimitPerMin: RATE_LIMIT,
    latencyMs: 20,
  });
  const dir = await mkdtemp(join(tmpdir(), "flowrules-soak-busy-"));
  const random = Prng.fn(o.seed + 46);
  let child: ChildProcess | undefined;
  const explained: string[] = [];
  let explainedUpTo = 0;
  try {
    await writeFile(join(dir, "rules.yaml"), BUSY_RULES_YAML);
    log(
      `busy tenant: ${o.minutes} min, N = ${o.instances}, limit ${RATE_LIMIT} a minute; every 30 s ${CHANGES_PER_ROUND} random changes and ${MATCHES_PER_ROUND} claims newly matching the approval rule`,
    );
    const started = Date.now();
    const cycles: number[] = [];
    const args = [o.cli, "--log-format", "json", "watch", "rules.yaml", "--state", "state", "--apply"];
    if (o.explain) args.push("--explain-requests");
    const c = spawn(process.execPath, args, {
      cwd: dir,
      env: cliEnv(sb.baseUrl, RATE_LIMIT),
      stdio: ["ignore", "ignore", "pipe"],
    });
    child = c;
    let buffered = "";
    c.stderr?.on("data", (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        let event: string | undefined;
        try {
          event = (JSON.parse(line) as { event?: string }).event;
        } catch {
          // not an event line
        }
        if (event === "watch.cycle") {
          cycles.push(Date.now());
          if (o.explain) {
            // what was asked since the last cycle ended (its polls, this cycle's plan and apply), by kind
            const all = sb.requests();
            const kinds: Record<string, number> = {};
            const since = all.slice(explainedUpTo);
            for (const r of since) kinds[requestKind(r)] = (kinds[requestKind(r)] ?? 0) + 1;
            explainedUpTo = all.length;
            explained.push(
              `--- cycle ${cycles.length} at ${new Date().toISOString()}: requests since the last ${JSON.stringify(kinds)}`,
              // each request in the order it came, to tell which ones a cycle could spare
              ...since.map((r) => `    ${r.at} ${r.status} ${requestLine(r)}`),
            );
          }
        } else if (o.explain) explained.push(line);
      }
    });
    const exited = new Promise<number | null>((r) => c.once("close", (code) => r(code)));
    while (cycles.length === 0) {
      if (c.exitCode !== null) throw new Error(`the watcher exited (${c.exitCode}) before its first cycle`);
      if (Date.now() - started > 10 * 60_000) throw new Error("no first cycle within 10 minutes");
      await sleep(200);
    }
    const firstCycleS = ((cycles[0] ?? Date.now()) - started) / 1000;
    const firstCycleRequests = sb.requests().length;
    log(`  first cycle after ${firstCycleS.toFixed(1)} s, ${firstCycleRequests} requests`);
    const firstCycles = cycles.length;

    const from = Date.now();
    const matched: Array<{ id: number; at: number }> = [];
    let peopleChanges = 0;
    const peopleUntil = from + (o.minutes - 1) * 60_000;
    for (let round = 1; Date.now() < peopleUntil; round++) {
      peopleChanges += sb.simulate({ seed: mixSeed(o.seed, round), changes: CHANGES_PER_ROUND }).ids.length;
      const pool = candidates(sb);
      for (let k = 0; k < MATCHES_PER_ROUND && pool.length > 0; k++) {
        const [id] = pool.splice(Math.floor(random() * pool.length), 1);
        if (id === undefined) break;
        sb.store.update(id, (i) => {
          i.values.set(AMOUNT, { inputValue: Math.round(random() * 9000) / 100 + 5 });
          i.values.set(CURRENCY, { inputValue: { radioItemSelected: "EUR" } });
          if (!i.tags.includes(TAG)) i.tags.push(TAG);
        });
        matched.push({ id, at: Date.now() });
      }
      if (round % 4 === 0)
        log(
          `  minute ${((Date.now() - from) / 60_000).toFixed(1)}: ${matched.length} matched, ${cycles.length - firstCycles} cycles`,
        );
      await sleep(Math.max(0, from + round * ROUND_MS - Date.now()));
    }
    // the last minute: nobody works, the watcher settles
    await sleep(Math.max(0, from + o.minutes * 60_000 - Date.now()));
    const to = Date.now();
    c.kill("SIGTERM");
    const exitCode = await exited;

    const all = sb.requests();
    const measured = all.filter((r) => Date.parse(r.at) >= from && Date.parse(r.at) <= to);
    const firstEffect = new Map<number, number>();
    const effective = new Map<string, number>();
    for (const r of all) {
      if (r.method !== "POST" || !tookEffect(r)) continue;
      const m = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
      if (!m) continue;
      const body = r.body as { step_id?: number; mode?: string } | null;
      const key = `${body?.mode ?? "complete"}:${m[1]}:${body?.step_id}`;
      effective.set(key, (effective.get(key) ?? 0) + 1);
      if (body?.step_id === STEP && Date.parse(r.at) >= from && !firstEffect.has(Number(m[1])))
        firstEffect.set(Number(m[1]), Date.parse(r.at));
    }
    const reactions: number[] = [];
    let moot = 0;
    let missed = 0;
    for (const m of matched) {
      const t = firstEffect.get(m.id);
      if (t !== undefined && t >= m.at) reactions.push((t - m.at) / 1000);
      else if (matches(sb, m.id)) missed += 1;
      else moot += 1;
    }
    const sorted = [...reactions].sort((a, b) => a - b);
    const kinds: Record<string, number> = {};
    for (const r of measured) kinds[requestKind(r)] = (kinds[requestKind(r)] ?? 0) + 1;
    const measuredS = (to - from) / 1000;
    const perMin = (measured.length * 60) / measuredS;
    if (o.explain) await writeFile(o.explain, `${explained.join("\n")}\n`);
    return {
      options: o,
      firstCycleS,
      firstCycleRequests,
      matched: matched.length,
      handled: reactions.length,
      moot,
      missed,
      reactionsS: reactions,
      reactionMedianS: quantile(sorted, 0.5),
      reactionP95S: quantile(sorted, 0.95),
      requests: measured.length,
      measuredS,
      requestsPerMin: perMin,
      keyPercent: (perMin * 100) / RATE_LIMIT,
      duplicates: [...effective.values()].filter((n) => n > 1).length,
      status429: all.filter((r) => r.status === 429).length,
      cycles: cycles.length - firstCycles,
      kinds,
      peopleChanges,
      exitCode,
    };
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await sb.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export type BusyTarget = ScenarioTarget;

export function busyTargets(r: BusyResult): BusyTarget[] {
  return [
    {
      text: "reaction p95 ≤ 30 s",
      measured: `${r.reactionP95S.toFixed(1)} s`,
      met: r.reactionP95S <= 30,
    },
    { text: "≤ 60 % of the key", measured: `${r.keyPercent.toFixed(0)} %`, met: r.keyPercent <= 60 },
    {
      text: "nothing missed",
      measured: `handled ${r.handled} of ${r.matched - r.moot}${r.moot > 0 ? ` (${r.moot} changed back by people first)` : ""}`,
      met: r.missed === 0 && r.handled + r.moot === r.matched,
    },
    { text: "sent twice: 0", measured: String(r.duplicates), met: r.duplicates === 0 },
    { text: "answered 429: 0", measured: String(r.status429), met: r.status429 === 0 },
  ];
}

export function renderBusy(r: BusyResult): string {
  const f = (x: number, d = 1): string => (Number.isNaN(x) ? "–" : x.toFixed(d));
  const cycles = Math.max(1, r.cycles);
  const lines = [
    "| measure | result |",
    "|---|---|",
    `| first cycle | ${f(r.firstCycleS)} s, ${r.firstCycleRequests} requests |`,
    `| reaction, median / p95 | ${f(r.reactionMedianS)} s / ${f(r.reactionP95S)} s |`,
    `| requests a minute (% of the key) | ${f(r.requestsPerMin)} (${f(r.keyPercent, 0)} %; ${r.requests} in ${f(r.measuredS, 0)} s) |`,
    `| handled | ${r.handled} of ${r.matched - r.moot}${r.moot > 0 ? ` (${r.moot} changed back by people first)` : ""} |`,
    `| sent twice | ${r.duplicates} |`,
    `| answered 429 | ${r.status429} |`,
    `| cycles (after the first), people's random changes | ${r.cycles}, ${r.peopleChanges} |`,
    "",
    "| requests of the measured time | all | a cycle |",
    "|---|---|---|",
    ...Object.entries(r.kinds)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `| ${k} | ${n} | ${f(n / cycles)} |`),
    "",
    "| target | measured | met |",
    "|---|---|---|",
    ...busyTargets(r).map((t) => `| ${t.text} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`),
  ];
  return `${lines.join("\n")}\n`;
}

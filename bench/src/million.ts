/**
 * The scenario at a million instances (`npm run bench -- --million`; docs/performance.md, "A million instances"): the
 * state scenario's six rules (./state.ts) run through the built CLI as a user runs them, each its own process, against
 * a sandbox of 1,000,000 instances in a child process of its own (./sandbox-proc.ts; no latency, no rate limit, its
 * clock pinned and moved by the scenario). In order:
 *   the first sync (`plan --state`, which reads everything and writes the state); the time to load the state
 *   (`state show`, the whole process, and the reader's pass alone with what its index holds); the same first sync cut
 *   at 30 % (kill -9), 60 % (SIGTERM) and 90 % (kill -9) of the uninterrupted one's requests, each resumed, and a last
 *   run to the end; 127 s later a steady run with nothing changed; 1 % of the instances changed by people and a run
 *   15 s later; then `apply --auto-approve --state` of the same rules capped at 1,000 changes (`max_changes_per_run`).
 * Measured: requests (the sandbox's count), each process's peak RSS (VmHWM) and wall time.
 */
import { fork } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliRun, type GcSummary } from "./cli-run.js";
import { SandboxProcess, vmHwmMb } from "./sandbox-proc.js";
import { STATE_RULES_YAML, STATE_WORKFLOWS } from "./state.js";
import type { IndexProbe } from "./index-probe.js";
import type { ScenarioTarget } from "./results.js";

export const MILLION = 1_000_000;
/**
 * What the Docker image and the systemd unit set for glibc's allocator (docs/operating.md, "Memory on a large
 * tenant"): a fixed threshold above which allocations are mapped and given back when freed. Without it glibc raises
 * the threshold each time a large buffer is freed, and freed table buffers stay in the process (~90 MB at 1,000,000).
 */
export const IMAGE_MALLOC: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };
/** a fixed moment, as the state scenario's: every run sees the same data and the same clock */
const START = "2026-06-15T12:00:00.000Z";
/** the apply's changes: the approval rule and the abort rule capped so that together they make 1,000 */
export const APPLY_CAP: Readonly<Record<string, number>> = {
  "s-approve-small-expenses": 700,
  "s-abort-stale-onboardings": 300,
};

/** The state scenario's rules with `max_changes_per_run` on the rules that change something. */
export function cappedRules(yaml = STATE_RULES_YAML): string {
  let out = yaml;
  for (const [name, cap] of Object.entries(APPLY_CAP)) {
    const at = `  - name: ${name}\n`;
    if (!out.includes(at)) throw new Error(`the scenario's rules have no rule ${name}`);
    out = out.replace(at, `${at}    limits: { max_changes_per_run: ${cap} }\n`);
  }
  return out;
}

export interface MillionStep {
  what: string;
  requests: number;
  peakRssMb: number;
  wallS: number;
  /** the changes an apply made (writes answered 200; a bulk abort counted by its ids) */
  applied?: number;
  /** with `--gc`: the most live on V8's heap after a full collection, and the most it took */
  gc?: GcSummary;
}

export interface MillionRun {
  n: number;
  /** variables every CLI run had beside the scenario's (the image's glibc setting), when asked */
  env?: Readonly<Record<string, string>>;
  sandbox: { startS: number; peakRssMb: number };
  firstSync: MillionStep;
  load: { stateShowS: number; stateMb: number; probe: IndexProbe };
  resume?: { runs: MillionStep[]; total: number; ratio: number };
  steady: MillionStep;
  churned: number;
  afterChurn: MillionStep;
  apply: MillionStep;
  stateless?: MillionStep;
}

/** A run's figures; a run that was not cut short must have ended well. */
function step(what: string, r: CliRun, cut = false): MillionStep {
  if (!cut && r.code !== 0)
    throw new Error(`${what}: the CLI exited ${r.code}: ${r.stderr.trim().split("\n").slice(-3).join(" / ")}`);
  return { what, requests: r.requests, peakRssMb: r.peakRssMb, wallS: r.wallS, ...(r.gc ? { gc: r.gc } : {}) };
}

function probeIndex(file: string): Promise<IndexProbe> {
  const script = fileURLToPath(new URL("./index-probe.js", import.meta.url));
  const child = fork(script, [file], { execArgv: ["--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", (m: IndexProbe | { error: string }) =>
      "error" in m ? reject(new Error(`index probe: ${m.error}`)) : resolve(m),
    );
    child.once("exit", (code) => reject(new Error(`the index probe exited (code ${code}) without a result`)));
  });
}

export async function runMillion(
  o: { n: number; seed: number; resume: boolean; stateless: boolean; gc?: boolean; imageMalloc?: boolean },
  log: (line: string) => void,
): Promise<MillionRun> {
  log(`million scenario at N = ${o.n}: starting the sandbox in a child process`);
  const gc = o.gc === true;
  const env = o.imageMalloc === true ? IMAGE_MALLOC : {};
  if (o.imageMalloc === true)
    log(
      `  every CLI run with ${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
  const sb = await SandboxProcess.start({ instances: o.n, seed: o.seed, latencyMs: 0, now: START });
  const sandbox = { startS: sb.startMs / 1000, peakRssMb: Math.round(await vmHwmMb(sb.pid)) };
  log(`  sandbox: ${sb.size} instances in ${sandbox.startS.toFixed(1)} s, ${sandbox.peakRssMb} MB`);
  const work = await mkdtemp(join(tmpdir(), "flowrules-bench-million-"));
  const show = (s: MillionStep): void =>
    log(
      `  ${s.what.padEnd(44)} ${String(s.requests).padStart(7)} requests, peak RSS ${s.peakRssMb} MB, ${s.wallS.toFixed(1)} s${s.applied === undefined ? "" : `, ${s.applied} applied`}${s.gc ? `, V8 heap: ${s.gc.maxLiveMb} MB live at most (after a full collection at ${s.gc.atS.toFixed(0)} s), ${s.gc.maxCommittedMb} MB at most` : ""}`,
    );
  try {
    const rules = join(work, "rules.yaml");
    const capped = join(work, "rules-capped.yaml");
    await writeFile(rules, STATE_RULES_YAML);
    await writeFile(capped, cappedRules());
    const plan = (dir: string): string[] => ["plan", rules, "--format", "json", "-q", "--state", join(work, dir)];
    // each CLI run as the scenario makes it, with the image's glibc setting when asked
    const cli = (args: string[], more: Parameters<typeof runCli>[2] = {}): ReturnType<typeof runCli> =>
      runCli(sb, args, { env, ...more });
    await sb.clear();
    const firstSync = step("first sync (plan --state, writes it)", await cli(plan("whole"), { gc }));
    show(firstSync);
    const file = join(work, "whole", "state.jsonl");
    const shown = await cli(["state", "show", "--state", join(work, "whole")]);
    const probe = await probeIndex(file);
    const load = { stateShowS: shown.wallS, stateMb: Math.round((await stat(file)).size / 1048576), probe };
    log(
      `  state: ${load.stateMb} MB on disk; state show ${load.stateShowS.toFixed(1)} s; the reader's pass ${(probe.ms / 1000).toFixed(1)} s, index ${probe.indexMb.toFixed(1)} MB (${probe.lines} lines, ${probe.records} records)`,
    );
    let resume: MillionRun["resume"];
    if (o.resume) {
      const runs: MillionStep[] = [];
      for (const [share, signal] of [
        [0.3, "SIGKILL"],
        [0.6, "SIGTERM"],
        [0.9, "SIGKILL"],
      ] as const) {
        // 30, 60 and 90 % of the uninterrupted sync's requests, counted over the runs so far
        const sofar = runs.reduce((a, x) => a + x.requests, 0);
        const r = await cli(plan("cut"), {
          stopAt: { requests: Math.max(1, Math.round(share * firstSync.requests) - sofar), signal },
        });
        runs.push(step(`first sync cut at ${share * 100} % (${signal === "SIGKILL" ? "kill -9" : signal})`, r, true));
        show(runs.at(-1) as MillionStep);
      }
      runs.push(step("first sync resumed to the end", await cli(plan("cut"))));
      show(runs.at(-1) as MillionStep);
      const total = runs.reduce((a, r) => a + r.requests, 0);
      resume = { runs, total, ratio: total / firstSync.requests };
      log(`  resumed: ${total} requests in ${runs.length} runs, ${resume.ratio.toFixed(3)}× the uninterrupted sync`);
    }
    await sb.advance(127_000);
    const steady = step("steady, nothing changed (127 s later)", await cli(plan("whole"), { gc }));
    show(steady);
    const churned = await sb.simulate({ seed: o.seed + 24, churn: 0.01 });
    await sb.advance(15_000);
    const afterChurn = step(`after 1 % churn (${churned} changed)`, await cli(plan("whole"), { gc }));
    show(afterChurn);
    await sb.advance(60_000);
    await sb.clear();
    const applyRun = await cli(["apply", capped, "--auto-approve", "-q", "--state", join(work, "whole")], {
      cwd: work,
      gc,
    });
    const apply = { ...step("apply --auto-approve --state (capped)", applyRun), applied: await sb.writes() };
    show(apply);
    let stateless: MillionStep | undefined;
    if (o.stateless) {
      stateless = step("stateless plan", await cli(["plan", rules, "--format", "json", "-q"]));
      show(stateless);
    }
    return {
      n: o.n,
      ...(o.imageMalloc === true ? { env } : {}),
      sandbox,
      firstSync,
      load,
      ...(resume ? { resume } : {}),
      steady,
      churned,
      afterChurn,
      apply,
      ...(stateless ? { stateless } : {}),
    };
  } finally {
    await sb.close();
    await rm(work, { recursive: true, force: true });
  }
}

export type MillionTarget = ScenarioTarget;

export function millionTargets(r: MillionRun): MillionTarget[] {
  const cap = 2 * STATE_WORKFLOWS + 5;
  const how = r.env
    ? ` (with ${Object.entries(r.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")})`
    : "";
  const out: MillionTarget[] = [
    {
      text: `N = ${r.n}: peak RSS of the first sync < 300 MB${how}`,
      measured: `${r.firstSync.peakRssMb} MB`,
      met: r.firstSync.peakRssMb < 300,
    },
    {
      text: `N = ${r.n}: peak RSS of a steady run < 200 MB${how}`,
      measured: `${r.steady.peakRssMb} MB`,
      met: r.steady.peakRssMb < 200,
    },
    {
      text: `N = ${r.n}: steady run, nothing changed ≤ 2 requests per workflow + 5 = ${cap}`,
      measured: String(r.steady.requests),
      met: r.steady.requests <= cap,
    },
    {
      text: `N = ${r.n}: loading the state < 5 s (\`state show\`, the whole process)`,
      measured: `${r.load.stateShowS.toFixed(1)} s`,
      met: r.load.stateShowS < 5,
    },
    {
      text: `N = ${r.n}: loading the state < 5 s (the reader's pass, as a run opens it)`,
      measured: `${(r.load.probe.ms / 1000).toFixed(1)} s`,
      met: r.load.probe.ms < 5000,
    },
  ];
  if (r.resume)
    out.push({
      text: `N = ${r.n}: first sync cut at 30/60/90 % and resumed ≤ 1.05× the requests of one uninterrupted`,
      measured: `${r.resume.ratio.toFixed(3)}×`,
      met: r.resume.ratio <= 1.05,
    });
  return out;
}

export function renderMillion(r: MillionRun): string {
  const row = (s: MillionStep, extra = ""): string =>
    `| ${r.n} | ${s.what}${extra} | ${s.requests} | ${s.peakRssMb} MB${s.gc ? ` (heap: ${s.gc.maxLiveMb} MB live at most, ${s.gc.maxCommittedMb} MB taken)` : ""} | ${s.wallS.toFixed(1)} s |`;
  const out = [
    "## A million instances",
    "",
    `Sandbox (child process): ${r.sandbox.startS.toFixed(1)} s to generate ${r.n} instances and listen, ${r.sandbox.peakRssMb} MB.`,
    ...(r.env
      ? [
          "",
          `Every CLI run with ${Object.entries(r.env)
            .map(([k, v]) => `\`${k}=${v}\``)
            .join(" ")} (as the Docker image runs it).`,
        ]
      : []),
    "",
    "| N | run | requests | peak RSS | wall |",
    "|---|---|---|---|---|",
    row(r.firstSync),
    `| ${r.n} | loading the state (${r.load.stateMb} MB): \`state show\` / the reader's pass alone | | index ${r.load.probe.indexMb.toFixed(1)} MB | ${r.load.stateShowS.toFixed(1)} s / ${(r.load.probe.ms / 1000).toFixed(1)} s |`,
  ];
  if (r.resume) {
    for (const s of r.resume.runs) out.push(row(s));
    out.push(`| ${r.n} | resumed first sync, total | ${r.resume.total} (${r.resume.ratio.toFixed(3)}×) | | |`);
  }
  out.push(row(r.steady), row(r.afterChurn), row(r.apply, `: ${r.apply.applied ?? "?"} applied`));
  if (r.stateless) out.push(row(r.stateless));
  out.push("", "| target | measured | met |", "|---|---|---|");
  for (const t of millionTargets(r)) out.push(`| ${t.text} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`);
  return `${out.join("\n")}\n`;
}

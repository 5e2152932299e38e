/**
 * Start-up of the built CLI (docs/performance.md, "Start-up"): `flowrules --version`, `--help`, a completion Tab and
 * `validate rules/`, each run as a fresh process many times, side by side with `node -e 0` in the same loop (the
 * cases take turns, so a busy machine slows them alike), reported as medians and as multiples of `node -e 0`: wall
 * time, and CPU time (user + system, all threads, read by the process itself as it exits), which a shared machine
 * disturbs much less; and which files each one loads, listed by a module hook (test/cli/startup.test.ts checks those
 * lists, never times).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

export interface StartupCase {
  name: string;
  /** node's arguments; the CLI's path is filled in by `startupCases` */
  args: string[];
  /** at most this many times `node -e 0` (the targets of docs/performance.md, "Start-up"), or none */
  target?: number;
}

/** The completion scripts call `flowrules __complete rules -- <words typed>` for `flowrules plan --rule <Tab>`. */
export const TAB_ARGS = ["__complete", "rules", "--", "plan", "--rule"];

export function startupCases(cli: string): StartupCase[] {
  return [
    { name: "node -e 0", args: ["-e", "0"] },
    { name: "flowrules --version", args: [cli, "--version"], target: 2 },
    { name: "flowrules --help", args: [cli, "--help"] },
    { name: "Tab (flowrules plan --rule ⇥)", args: [cli, ...TAB_ARGS], target: 2 },
    { name: "flowrules validate rules/", args: [cli, "validate", "rules/"], target: 4 },
  ];
}

/**
 * A module hook for `node --import`: every file the process loads, ES modules through the loader's `load` hook
 * (it runs on the loader's thread, so it appends to a file), CommonJS ones from require's cache at exit.
 */
const HOOK = [
  'import { appendFileSync } from "node:fs";',
  "let out;",
  "export function initialize(data) { out = data.out; }",
  'export async function load(url, context, next) { if (url.startsWith("file:")) appendFileSync(out, url + "\\n"); return next(url, context); }',
].join("\n");
const PRELOAD = [
  'import { register, createRequire } from "node:module";',
  'import { appendFileSync } from "node:fs";',
  "const out = process.env.FLOWRULES_LOADED_OUT;",
  `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)}, { data: { out } });`,
  'const cache = createRequire(process.cwd() + "/").cache;',
  'process.on("exit", () => appendFileSync(out, Object.keys(cache).map((f) => f + "\\n").join("")));',
].join("\n");

/** For the CPU runs: the process reports its CPU time on stderr as it exits. */
const CPU_PRELOAD =
  'process.on("exit", () => { const u = process.cpuUsage(); process.stderr.write(`\\n@@cpu ${(u.user + u.system) / 1000}\\n`); });';

export interface Loaded {
  /** absolute paths of the files the process loaded (Node's own built-ins not included), sorted */
  files: string[];
  status: number | null;
  stdout: string;
}

/** Runs `node <args>` once and lists the files it loaded. */
export function loadedModules(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Loaded {
  const dir = mkdtempSync(join(tmpdir(), "flowrules-loaded-"));
  try {
    const out = join(dir, "loaded.txt");
    const r = spawnSync(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(PRELOAD)}`, ...args],
      {
        cwd: opts.cwd,
        env: { ...(opts.env ?? process.env), FLOWRULES_LOADED_OUT: out },
        encoding: "utf8",
      },
    );
    let text = "";
    try {
      text = readFileSync(out, "utf8");
    } catch {
      // nothing loaded (or the process died before writing): an empty list
    }
    const files = new Set(
      text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (l.startsWith("file:") ? fileURLToPath(l) : l)),
    );
    return { files: [...files].sort(), status: r.status, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface StartupRow {
  name: string;
  command: string;
  /** wall time, median */
  medianMs: number;
  /** median ÷ the median of `node -e 0` */
  ratio: number;
  /** CPU time (user + system), median */
  cpuMs: number;
  cpuRatio: number;
  files: number;
  target?: number;
  met?: boolean;
}

export interface StartupResults {
  runs: number;
  rows: StartupRow[];
  /** the machine's load average when the runs began and ended (a shared machine slows start-up) */
  loadAverage: [number, number];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

/** Each case `runs` times, taking turns; a case that fails (exit code ≠ 0) stops the benchmark. */
export async function runStartup(
  opts: { cli: string; cwd: string; runs: number },
  log: (line: string) => void = () => undefined,
): Promise<StartupResults> {
  const { loadavg } = await import("node:os");
  const before = loadavg()[0] ?? 0;
  const cases = startupCases(opts.cli);
  const env = { ...process.env, NO_COLOR: "1" };
  const times: number[][] = cases.map(() => []);
  const cpu: number[][] = cases.map(() => []);
  const cpuArgs = ["--import", `data:text/javascript,${encodeURIComponent(CPU_PRELOAD)}`];
  for (let i = 0; i < opts.runs; i++) {
    cases.forEach((c, j) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, c.args, { cwd: opts.cwd, env, stdio: "ignore" });
      times[j]?.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(`${c.name} exited with ${r.status ?? r.signal}`);
      const measured = spawnSync(process.execPath, [...cpuArgs, ...c.args], {
        cwd: opts.cwd,
        env,
        stdio: ["ignore", "ignore", "pipe"],
        encoding: "utf8",
      });
      const ms = Number(/@@cpu ([\d.]+)\s*$/.exec(measured.stderr)?.[1]);
      if (!Number.isFinite(ms)) throw new Error(`${c.name} reported no CPU time: ${measured.stderr.slice(-200)}`);
      cpu[j]?.push(ms);
    });
    if ((i + 1) % 5 === 0) log(`start-up: ${i + 1} of ${opts.runs} rounds`);
  }
  const base = median(times[0] ?? []);
  const cpuBase = median(cpu[0] ?? []);
  const rows = cases.map((c, j): StartupRow => {
    const m = median(times[j] ?? []);
    const cpuMs = median(cpu[j] ?? []);
    const ratio = m / base;
    const cpuRatio = cpuMs / cpuBase;
    return {
      name: c.name,
      command: ["node", ...c.args].join(" "),
      medianMs: m,
      ratio,
      cpuMs,
      cpuRatio,
      files: loadedModules(c.args, { cwd: opts.cwd, env }).files.length,
      // met when both are: a busy machine stretches the wall times of short runs less than their work
      ...(c.target !== undefined ? { target: c.target, met: ratio <= c.target && cpuRatio <= c.target } : {}),
    };
  });
  return { runs: opts.runs, rows, loadAverage: [before, loadavg()[0] ?? 0] };
}

export function renderStartup(r: StartupResults): string {
  const head =
    "| command | wall | × `node -e 0` | CPU | × `node -e 0` | files loaded | target | |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
  const rows = r.rows.map(
    (row) =>
      `| ${row.name} | ${row.medianMs.toFixed(0)} ms | ${row.ratio.toFixed(2)}× | ${row.cpuMs.toFixed(0)} ms | ${row.cpuRatio.toFixed(2)}× | ${row.files} | ${row.target !== undefined ? `≤ ${row.target}×` : ""} | ${row.met === undefined ? "" : row.met ? "met" : "NOT met"} |`,
  );
  const load = `${r.runs} runs each, medians; load average ${r.loadAverage[0].toFixed(1)} → ${r.loadAverage[1].toFixed(1)}`;
  return `${[head, ...rows].join("\n")}\n\n${load}\n`;
}

/**
 * `npm run bench:resume` (docs/performance.md, "Large tenants: a first sync over several runs"): a first sync with
 * `--state` run through the built CLI, once uninterrupted and once stopped at 30 % (kill -9), 60 % (SIGTERM) and 90 %
 * (kill -9) of the uninterrupted run's requests, each time resumed by the same command; then a steady run with
 * nothing changed. Measured: requests (the sandbox's log), each process's peak RSS (VmHWM from /proc, sampled until
 * it exits), wall time, the time `flowrules state show` takes to read and verify the state, and whether the resumed
 * sync's plan equals the uninterrupted one's.
 *
 * Plans are compared at one moment: each CLI plan (uninterrupted, resumed) with a stateless plan made in-process at
 * that plan's own `now` against the same sandbox. The sandbox's clock runs with real time and the scenario's rules
 * select relative to now (`last_updated_time_before: -P90D`, `deadline_before: now`), so two plans made minutes
 * apart may rightly differ by an instance that crossed a bound in between (at 100,000 instances one did): that says
 * nothing of the state.
 *
 *   npm run bench:resume -- [--sizes 20000,100000] [--latency 20] [--out FILE]
 *
 * The sandbox's request count is polled every 20 ms (`requestCount`, nothing copied, not capped like its log), so
 * `--sizes 1000000` works too (about 130,000 requests a sync); `npm run bench -- --million` runs that size with the
 * sandbox in a process of its own (bench/src/million.ts).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import { createClient } from "#flowrules/api/index.js";
import { runPlan } from "#flowrules/engine/plan-live.js";
import { compileSources } from "#flowrules/rules/index.js";
import { DEFAULT_OPT_OUT_TAG } from "#flowrules/model/defaults.js";
import { API_KEY, cliEnv } from "./scenario.js";
import { STATE_RULES_YAML } from "./state.js";

const CLI = resolve("dist/cli/index.js");

interface Run {
  requests: number;
  peakRssMb: number;
  wallS: number;
  code: number | null;
  signal: string | null;
  stdout: string;
}

async function vmHwm(pid: number): Promise<number> {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The CLI as a child; `stopAt` (requests of the sandbox's log) sends `signal` once reached. */
function cli(sb: RunningSandbox, args: string[], stopAt?: { requests: number; signal: NodeJS.Signals }): Promise<Run> {
  const before = sb.requestCount();
  const t0 = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cliEnv(sb.baseUrl, 0),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  // decoded as a stream: a character whose bytes two chunks share ("—" in an instance's name) stays whole
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d: string) => (stdout += d));
  child.stderr.on("data", () => undefined);
  let peak = 0;
  let sent = false;
  const timer = setInterval(() => {
    if (child.pid) void vmHwm(child.pid).then((m) => (peak = Math.max(peak, m)));
    if (stopAt && !sent && sb.requestCount() >= stopAt.requests) {
      sent = true;
      child.kill(stopAt.signal);
    }
  }, 20);
  return new Promise((done) =>
    child.on("close", (code, signal) => {
      clearInterval(timer);
      done({
        requests: sb.requestCount() - before,
        peakRssMb: Math.round(peak),
        wallS: (Date.now() - t0) / 1000,
        code,
        signal,
        stdout,
      });
    }),
  );
}

function digest(stdout: string): string {
  if (stdout.trim() === "") return "(no plan)";
  const plan = JSON.parse(stdout) as { created_at: string; summary: Record<string, unknown> };
  const {
    created_at: _c,
    summary,
    ...rest
  } = JSON.parse(stdout.split(plan.created_at).join("<now>")) as typeof plan & { digest?: string };
  const { requests: _r, ...counts } = summary;
  return createHash("sha256")
    .update(JSON.stringify({ ...rest, digest: undefined, summary: counts }))
    .digest("hex")
    .slice(0, 16);
}

/** A stateless plan at the CLI plan's own now (its created_at), as JSON: what the CLI plan must equal. */
async function statelessAt(sb: RunningSandbox, cliPlan: string): Promise<string> {
  if (cliPlan.trim() === "") return "";
  const loaded = compileSources([{ file: "rules.yaml", text: STATE_RULES_YAML }]);
  if (!loaded.ruleSet) throw new Error("the scenario's rules do not load");
  const now = new Date((JSON.parse(cliPlan) as { created_at: string }).created_at);
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: API_KEY, rateLimitPerMin: 0 });
  try {
    return JSON.stringify(await runPlan({ client, ruleSet: loaded.ruleSet, now, optOutTag: DEFAULT_OPT_OUT_TAG }));
  } finally {
    await client.close();
  }
}

/** The path of the first leaf where two JSON values differ, and both leaves. */
function firstDifference(a: unknown, b: unknown, path = ""): string {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const va = (a as Record<string, unknown>)[k];
      const vb = (b as Record<string, unknown>)[k];
      if (JSON.stringify(va) !== JSON.stringify(vb)) return firstDifference(va, vb, `${path}.${k}`);
    }
  }
  return `${path}: ${JSON.stringify(a)?.slice(0, 200)} vs ${JSON.stringify(b)?.slice(0, 200)}`;
}

/** Where two plans differ, in a few words (rules whose counts differ, changes and report rows one has alone). */
function difference(a: string, b: string): string[] | undefined {
  if (digest(a) === digest(b)) return undefined;
  if (a.trim() === "" || b.trim() === "") return ["one made no plan"];
  interface P {
    rules: { name: string; selected: number; matched: number; changes: number }[];
    changes: { rule: string; instance_id: number }[];
    reports: { rule: string; groups: { key: string; instance_ids: number[] }[] }[];
  }
  const pa = JSON.parse(a) as P;
  const pb = JSON.parse(b) as P;
  const out: string[] = [];
  for (const r of pa.rules) {
    const o = pb.rules.find((x) => x.name === r.name);
    if (!o || o.selected !== r.selected || o.matched !== r.matched || o.changes !== r.changes)
      out.push(
        `${r.name}: ${r.selected}/${r.matched}/${r.changes} vs ${o ? `${o.selected}/${o.matched}/${o.changes}` : "none"}`,
      );
  }
  const keys = (p: P): Set<string> =>
    new Set([
      ...p.changes.map((c) => `${c.rule} change ${c.instance_id}`),
      ...p.reports.flatMap((r) => r.groups.flatMap((g) => g.instance_ids.map((id) => `${r.rule} row ${g.key} ${id}`))),
    ]);
  const ka = keys(pa);
  const kb = keys(pb);
  out.push(
    ...[...ka]
      .filter((k) => !kb.has(k))
      .slice(0, 5)
      .map((k) => `only first: ${k}`),
  );
  out.push(
    ...[...kb]
      .filter((k) => !ka.has(k))
      .slice(0, 5)
      .map((k) => `only second: ${k}`),
  );
  // anything else: the top-level keys that differ, and the first change or error that does
  const norm = (text: string): Record<string, unknown> => {
    const createdAt = (JSON.parse(text) as { created_at: string }).created_at;
    return JSON.parse(text.split(createdAt).join("<now>")) as Record<string, unknown>;
  };
  const na = norm(a);
  const nb = norm(b);
  for (const k of new Set([...Object.keys(na), ...Object.keys(nb)])) {
    if (["created_at", "digest", "summary"].includes(k)) continue;
    if (JSON.stringify(na[k]) === JSON.stringify(nb[k])) continue;
    const la = Array.isArray(na[k]) ? (na[k] as unknown[]) : [na[k]];
    const lb = Array.isArray(nb[k]) ? (nb[k] as unknown[]) : [nb[k]];
    const i = la.findIndex((v, n) => JSON.stringify(v) !== JSON.stringify(lb[n]));
    out.push(`${k}[${i}]${firstDifference(la[i], lb[i])}`);
  }
  return out.length > 0 ? out : ["the summary"];
}

async function scenario(n: number, latencyMs: number): Promise<Record<string, unknown>> {
  // the sandbox's own clock runs (a pinned one makes every run list the instances stamped at that very instant as
  // changed): so the two plans, made minutes apart, may differ where a selection is relative to now
  const sb = await startSandbox({ port: 0, instances: n, seed: 1, latencyMs });
  const work = await mkdtemp(join(tmpdir(), "flowrules-bench-resume-"));
  try {
    const rules = join(work, "rules.yaml");
    await writeFile(rules, STATE_RULES_YAML);
    const plan = (dir: string): string[] => ["plan", rules, "--format", "json", "--state", join(work, dir), "-q"];
    // uninterrupted
    sb.clearRequests();
    const whole = await cli(sb, plan("whole"));
    const total = whole.requests;
    const wholeStateless = await statelessAt(sb, whole.stdout);
    // interrupted at 30 % (kill -9), 60 % (SIGTERM), 90 % (kill -9), then resumed to the end
    sb.clearRequests();
    const cuts: Run[] = [];
    for (const [share, signal] of [
      [0.3, "SIGKILL"],
      [0.6, "SIGTERM"],
      [0.9, "SIGKILL"],
    ] as const) {
      cuts.push(await cli(sb, plan("cut"), { requests: Math.round(share * total), signal }));
    }
    const last = await cli(sb, plan("cut"));
    const resumedTotal = cuts.reduce((a, r) => a + r.requests, 0) + last.requests;
    const lastStateless = await statelessAt(sb, last.stdout);
    // steady: nothing changed
    sb.clearRequests();
    const steady = await cli(sb, plan("whole"));
    // the state read and verified in full
    const t0 = Date.now();
    await cli(sb, ["state", "show", "--state", join(work, "whole")]);
    const loadS = (Date.now() - t0) / 1000;
    const size = (await readFile(join(work, "whole", "state.jsonl"))).length;
    return {
      instances: n,
      first_sync: { requests: total, peak_rss_mb: whole.peakRssMb, wall_s: whole.wallS },
      resumed: {
        requests: resumedTotal,
        ratio: Number((resumedTotal / total).toFixed(3)),
        runs: [...cuts, last].map((r) => ({
          requests: r.requests,
          peak_rss_mb: r.peakRssMb,
          signal: r.signal,
          code: r.code,
        })),
      },
      // each equal to a stateless plan at its own moment (the property test/state/resume.test.ts checks)
      plans_equal: {
        uninterrupted: digest(whole.stdout) === digest(wholeStateless),
        resumed: digest(last.stdout) === digest(lastStateless),
      },
      ...(digest(whole.stdout) !== digest(wholeStateless)
        ? { uninterrupted_differs: difference(whole.stdout, wholeStateless) }
        : {}),
      ...(digest(last.stdout) !== digest(lastStateless)
        ? { resumed_differs: difference(last.stdout, lastStateless) }
        : {}),
      // the two CLI plans, minutes apart: may differ by instances that crossed a bound relative to now meanwhile
      uninterrupted_equals_resumed: digest(whole.stdout) === digest(last.stdout),
      steady: { requests: steady.requests, peak_rss_mb: steady.peakRssMb, wall_s: steady.wallS },
      state_show_s: loadS,
      state_mb: Math.round(size / 1024 / 1024),
    };
  } finally {
    await sb.close();
    await rm(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "20000,100000" },
      latency: { type: "string", default: "20" },
      out: { type: "string" },
    },
  });
  const results: Array<Record<string, unknown>> = [];
  for (const n of values.sizes.split(",").map(Number)) {
    const r = await scenario(n, Number(values.latency));
    console.log(JSON.stringify(r));
    results.push(r);
  }
  if (values.out)
    await writeFile(values.out, JSON.stringify({ measured_at: new Date().toISOString(), results }, null, 2));
}

await main();

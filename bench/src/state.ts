/**
 * The state scenario (`--state-sizes`, issues 24 and 33): what a scheduled run costs with `--state` against a stateless one.
 * Six rules of the kind operations teams write, over the four demo workflows. Per N, on a sandbox whose clock the
 * scenario moves (its Date header is that clock):
 *   first run with state (it builds the state); 1 % of the instances changed by people, 15 seconds later
 *   (a) a stateless plan and (b) a plan with state at the same moment; 127 s after the changes, with nothing changed
 *   since, (f) a plan with state (a lookback of two minutes from (b) would list those changes again); a minute
 *   later (c) one with the approval threshold (`when`) edited; a minute later
 *   (d) one with a `select` of one rule edited (and that rule alone, stateless: its own cost); then 1 % more changed,
 *   `apply rules --auto-approve --state` (plan with the state, apply through it), and 15 minutes later (e) a plan
 *   with state. Each plan with state is compared with a stateless plan at the same moment (their plans must be
 *   equal). Requests are counted from the sandbox's log; each run is its own process, so its peak RSS is its own.
 */
import { createHash } from "node:crypto";
import { fork } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { createClient } from "#flowrules/api/index.js";
import { runPlan } from "#flowrules/engine/plan-live.js";
import type { Plan } from "#flowrules/plan/types.js";
import { compileSources } from "#flowrules/rules/index.js";
import { startSandbox, type RunningSandbox } from "#flowrules/sandbox/index.js";
import { openRunState, readInFull, DEFAULT_RESYNC_AFTER_MS } from "#flowrules/state/index.js";
import { applyCommand } from "#flowrules/commands/apply.js";
import { writeFile } from "node:fs/promises";
import { API_KEY } from "./scenario.js";
import { RssSampler } from "./side.js";
import type { FromChild, ToChild } from "./child.js";
import type { ScenarioTarget } from "./results.js";

export const STATE_SIZES = [20_000, 100_000];
export const STATE_CHURN = 0.01;
const STEP_MS = 15 * 60_000;
/** a fixed moment, so every run of the scenario sees the same data and the same clock */
const START = new Date("2026-06-15T12:00:00.000Z");

export const STATE_RULES_YAML = `version: 1
rules:
  - name: s-approve-small-expenses
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, currency: { step: 20111, action: 50223 } }
    select: { status: [running], active_step_id: 20111, tags: [expenses] }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50231, value: { date: "{{ $now() }}" } } ] }
  - name: s-budget-estimate
    workflow: 1044
    fields: { quantity: { step: 20130, action: 50261 }, price: { step: 20130, action: 50262 } }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity * fields.price > 5000
    actions: [ { report: { group_by: priority, columns: [id, name, fields.quantity, fields.price] } } ]
  - name: s-abort-stale-onboardings
    workflow: { name: Employee onboarding }
    select: { status: [running], last_updated_time_before: -P90D }
    actions: [ abort ]
  - name: s-overdue-expenses
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: running, deadline_before: now }
    actions: [ { report: { group_by: tags, columns: [id, name, deadline, fields.amount] } } ]
  - name: s-risky-access
    workflow: 1045
    fields: { risk: { step: 20141, action: 50272 } }
    select: { status: [running], active_step_id: 20141 }
    when: fields.risk > 7
    actions: [ { report: { group_by: status, columns: [id, name, fields.risk] } } ]
  - name: s-unchecked-finance
    workflow: 1042
    fields: { checks: { step: 20112, action: 50240 } }
    select: { status: [running], active_step_id: 20112 }
    when: $not("Receipt attached" in fields.checks)
    actions: [ { report: { group_by: priority, columns: [id, name] } } ]
`;

export interface StatePlanOptions {
  baseUrl: string;
  concurrency: number;
  /** the plan's now (ISO): the sandbox's clock */
  now: string;
  /** absent: a stateless run */
  stateDir?: string;
  /** the rules (default STATE_RULES_YAML) */
  rulesYaml?: string;
  /** only these rules */
  only?: string[];
}

/** The scenario's edits: the approval threshold (`when`), and a `select` filter added to one rule. */
export const WHEN_EDIT: [string, string] = ["when: fields.amount < 100 and", "when: fields.amount < 150 and"];
export const SELECT_EDIT: [string, string] = [
  "select: { status: [running], active_step_id: 20141 }",
  "select: { status: [running], active_step_id: 20141, priority: H }",
];
export const SELECT_EDITED_RULE = "s-risky-access";

export interface StatePlanResult {
  wallMs: number;
  maxRssBytes: number;
  /** sha-256 of the plan minus created_at and its request count: equal plans, equal digests */
  digest: string;
  changes: number;
  errors: string[];
  fromState: number;
  readAgain: number;
  warnings: string[];
}

function planDigestOf(plan: Plan): string {
  const { created_at: _c, summary, ...rest } = plan;
  const { requests: _r, ...counts } = summary as typeof summary & { requests?: number };
  return createHash("sha256")
    .update(JSON.stringify({ ...rest, summary: counts }))
    .digest("hex");
}

/** One plan, stateless or with the state dir, as `flowrules plan [--state DIR]` does it. */
export async function statePlanStep(o: StatePlanOptions): Promise<StatePlanResult> {
  const sampler = new RssSampler();
  const loaded = compileSources([{ file: "bench-state.yaml", text: o.rulesYaml ?? STATE_RULES_YAML }]);
  if (!loaded.ruleSet)
    throw new Error(`the state scenario's rules do not load: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
  const only = o.only;
  const ruleSet = only
    ? { ...loaded.ruleSet, rules: loaded.ruleSet.rules.filter((r) => only.includes(r.name)) }
    : loaded.ruleSet;
  const now = new Date(o.now);
  const t0 = performance.now();
  const client = createClient({ baseUrl: o.baseUrl, apiKey: API_KEY, rateLimitPerMin: 0, concurrency: o.concurrency });
  const warnings: string[] = [];
  let plan: Plan;
  let counts = { fromState: 0, readAgain: 0 };
  try {
    if (o.stateDir) {
      const run = await openRunState(
        { dir: o.stateDir, resyncAfterMs: DEFAULT_RESYNC_AFTER_MS, fullRefresh: false },
        {
          baseUrl: client.baseUrl,
          apiKey: API_KEY,
          now,
          rules: ruleSet.rules,
          version: "bench",
          warn: (m) => warnings.push(m),
        },
      );
      try {
        plan = await runPlan({ client: run.wrap(client), ruleSet, now });
        if (readInFull(plan)) await run.commit();
        counts = run.counts() ?? counts;
      } finally {
        await run.release();
      }
    } else {
      plan = await runPlan({ client, ruleSet, now });
    }
  } finally {
    await client.close();
  }
  const result: StatePlanResult = {
    wallMs: performance.now() - t0,
    maxRssBytes: Math.max(sampler.peak(), sampler.maxRss()),
    digest: planDigestOf(plan),
    changes: plan.changes.length,
    errors: plan.errors.map((e) => e.message),
    ...counts,
    warnings,
  };
  sampler.stop();
  return result;
}

export interface StateApplyOptions extends StatePlanOptions {
  stateDir: string;
  /** where the rules file and .flowrules/ (lock, runs) go */
  workDir: string;
}

export interface StateApplyResult {
  wallMs: number;
  maxRssBytes: number;
  exitCode: number;
  /** what the run wrote on stderr (the state line; errors) */
  output: string;
}

/** `flowrules apply rules.yaml --auto-approve --state DIR`: plan with the state, then apply, one process. */
export async function stateApplyStep(o: StateApplyOptions): Promise<StateApplyResult> {
  const sampler = new RssSampler();
  const rulesFile = join(o.workDir, "bench-state.yaml");
  await writeFile(rulesFile, STATE_RULES_YAML);
  const t0 = performance.now();
  let output = "";
  const exitCode = await applyCommand(
    {
      paths: [rulesFile],
      autoApprove: true,
      detailedExitcode: false,
      quiet: false,
      rules: [],
      state: o.stateDir,
      now: new Date(o.now),
      cwd: o.workDir,
      connection: {
        baseUrl: o.baseUrl,
        apiKey: API_KEY,
        rateLimitPerMin: 0,
        concurrency: o.concurrency,
        timeoutMs: 30_000,
        insecureHttp: false,
      },
    },
    // stderr kept (the state line, errors); the plan and summary on stdout are not needed
    { stdout: () => undefined, stderr: (s) => void (output += s), env: {}, stdoutIsTTY: false, stderrIsTTY: false },
  );
  const result = {
    wallMs: performance.now() - t0,
    maxRssBytes: Math.max(sampler.peak(), sampler.maxRss()),
    exitCode,
    output: output.trim(),
  };
  sampler.stop();
  return result;
}

export interface StateStep {
  what: string;
  /** the target's letter (a–f) when the step is one */
  key?: string;
  requests: number;
  result: StatePlanResult;
  /** a plan with state: the stateless plan at the same moment (equal digests, equal plans) */
  stateless?: { result: StatePlanResult; requests: number };
}

export interface StateRun {
  n: number;
  churned: number;
  steps: StateStep[];
  /** the plans with state equal the stateless plans at the same moment */
  equal: boolean;
  rssScope: "child" | "in-process";
  /** after one more 1 % of churn: `apply rules --auto-approve --state` (plan with the state, apply through it) */
  apply?: { requests: number; churned: number; applied: number; result: StateApplyResult };
  /** the edited rule alone, stateless: (d)'s allowance */
  editedRuleAlone?: number;
}

function inChild(options: StatePlanOptions): Promise<StatePlanResult>;
function inChild(options: StateApplyOptions, apply: true): Promise<StateApplyResult>;
function inChild(
  options: StatePlanOptions | StateApplyOptions,
  apply = false,
): Promise<StatePlanResult | StateApplyResult> {
  const script = fileURLToPath(new URL("./child.js", import.meta.url));
  const child = fork(script, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    let settled = false;
    child.on("message", (msg: FromChild) => {
      if (settled) return;
      settled = true;
      if (msg.type === "result" && msg.output.kind === "state-plan" && !apply) resolve(msg.output.result);
      else if (msg.type === "result" && msg.output.kind === "state-apply" && apply) resolve(msg.output.result);
      else reject(new Error(`the state-plan child failed: ${msg.type === "error" ? msg.message : msg.type}`));
    });
    child.on("error", (err) => {
      if (settled) return;
      settled = true;
      reject(err);
    });
    child.on("exit", (code) => {
      if (settled) return;
      settled = true;
      reject(new Error(`the state-plan child exited (code ${code}) without a result`));
    });
    const job: ToChild = apply
      ? { type: "run", job: { kind: "state-apply", options: options as StateApplyOptions } }
      : { type: "run", job: { kind: "state-plan", options } };
    child.send(job);
  });
}

export async function runStateScenario(
  o: { seed: number; latencyMs: number; concurrency: number; sizes: number[]; inProcess: boolean },
  log: (line: string) => void,
): Promise<StateRun[]> {
  const runs: StateRun[] = [];
  const whenEdited = STATE_RULES_YAML.replace(...WHEN_EDIT);
  const selectEdited = STATE_RULES_YAML.replace(...SELECT_EDIT);
  if (whenEdited === STATE_RULES_YAML || selectEdited === STATE_RULES_YAML)
    throw new Error("the scenario's rule edits no longer apply to its rules");
  for (const n of o.sizes) {
    log(`state scenario at N = ${n} (1 % churn)`);
    const sb: RunningSandbox = await startSandbox({
      port: 0,
      instances: n,
      seed: o.seed,
      latencyMs: o.latencyMs,
      now: START,
    });
    const dir = await mkdtemp(join(tmpdir(), "flowrules-bench-state-"));
    try {
      const steps: StateStep[] = [];
      const plan = async (
        what: string,
        extra: Partial<StatePlanOptions> = {},
      ): Promise<{ result: StatePlanResult; requests: number }> => {
        sb.clearRequests();
        const options: StatePlanOptions = {
          baseUrl: sb.baseUrl,
          concurrency: o.concurrency,
          now: sb.store.now().toISOString(),
          ...extra,
        };
        const result = o.inProcess ? await statePlanStep(options) : await inChild(options);
        const requests = sb.requests().length;
        if (result.errors.length > 0 && !extra.stateDir) log(`  (${what}: ${result.errors.length} plan errors)`);
        return { result, requests };
      };
      const step = async (what: string, key: string | undefined, rulesYaml?: string): Promise<StateStep> => {
        const withRules = rulesYaml ? { rulesYaml } : {};
        const { result, requests } = await plan(what, { stateDir: join(dir, "state"), ...withRules });
        const alone = key === undefined ? undefined : await plan(`${what}, stateless`, withRules);
        const s: StateStep = {
          what,
          ...(key ? { key } : {}),
          requests,
          result,
          ...(alone ? { stateless: { result: alone.result, requests: alone.requests } } : {}),
        };
        steps.push(s);
        const eq = alone
          ? alone.result.digest === result.digest
            ? ", equal to stateless"
            : ", DIFFERENT from stateless"
          : "";
        log(
          `  ${what.padEnd(40)} ${String(requests).padStart(6)} requests (stateless ${alone ? alone.requests : "—"}), ${(result.wallMs / 1000).toFixed(1)} s, peak RSS ${(result.maxRssBytes / 1048576).toFixed(0)} MB, ${result.fromState} from the state, ${result.readAgain} read again${eq}`,
        );
        return s;
      };
      await step("first run with state (writes it)", undefined);
      const churn = sb.simulate({ seed: o.seed + 24, churn: STATE_CHURN });
      sb.advanceClock(15_000);
      await step("with state after 1 % churn", "b");
      sb.advanceClock(112_000);
      await step("with state, 127 s after the last change", "f");
      sb.advanceClock(60_000);
      await step("with state after a `when` edit", "c", whenEdited);
      sb.advanceClock(60_000);
      await step("with state after a `select` edit", "d", selectEdited);
      const alone = await plan("the edited rule alone, stateless", {
        rulesYaml: selectEdited,
        only: [SELECT_EDITED_RULE],
      });
      log(`  ${"the edited rule alone, stateless".padEnd(40)} ${String(alone.requests).padStart(6)} requests`);
      const churn2 = sb.simulate({ seed: o.seed + 25, churn: STATE_CHURN });
      sb.advanceClock(STEP_MS);
      sb.clearRequests();
      const workDir = join(dir, "apply");
      await mkdir(workDir, { recursive: true });
      const applyOptions: StateApplyOptions = {
        baseUrl: sb.baseUrl,
        concurrency: o.concurrency,
        now: sb.store.now().toISOString(),
        stateDir: join(dir, "state"),
        workDir,
      };
      const applied = o.inProcess ? await stateApplyStep(applyOptions) : await inChild(applyOptions, true);
      const writes = sb.requests().filter((r) => r.method === "POST" && r.status === 200);
      const appliedCount = writes.reduce(
        (k, r) => k + (r.path.endsWith("/bulk/abort") ? ((r.body as { ids?: number[] } | null)?.ids?.length ?? 0) : 1),
        0,
      );
      const apply = {
        requests: sb.requests().length,
        churned: churn2.ids.length,
        applied: appliedCount,
        result: applied,
      };
      if (applied.exitCode !== 0)
        throw new Error(`apply --auto-approve --state exited ${applied.exitCode}: ${applied.output}`);
      log(
        `  ${"apply --auto-approve, state".padEnd(40)} ${String(apply.requests).padStart(6)} requests, ${appliedCount} changes applied, ${(applied.wallMs / 1000).toFixed(1)} s, peak RSS ${(applied.maxRssBytes / 1048576).toFixed(0)} MB (after ${apply.churned} more changed)`,
      );
      sb.advanceClock(STEP_MS);
      await step(`with state after applying ${appliedCount} changes`, "e");
      const stateless = steps.find((x) => x.key === "b")?.stateless;
      if (stateless)
        steps.splice(1, 0, {
          what: "stateless after 1 % churn",
          key: "a",
          requests: stateless.requests,
          result: stateless.result,
        });
      const equal = steps.every((x) => !x.stateless || x.stateless.result.digest === x.result.digest);
      log(`  plans with state ${equal ? "equal" : "DIFFER FROM"} the stateless plans at the same moment`);
      runs.push({
        n,
        churned: churn.ids.length,
        steps,
        equal,
        rssScope: o.inProcess ? "in-process" : "child",
        apply,
        editedRuleAlone: alone.requests,
      });
    } finally {
      await sb.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return runs;
}

/** Workflows with rules in the scenario: the unchanged-tenant target is 2 requests each, plus 5. */
export const STATE_WORKFLOWS = 4;
/** Peak resident set of every run, plan and apply, at 100,000 instances (issue 33). */
export const STATE_RSS_MB = 160;

export type StateTarget = ScenarioTarget;

export function stateTargets(runs: StateRun[]): StateTarget[] {
  const out: StateTarget[] = [];
  for (const r of runs) {
    const get = (key: string): StateStep | undefined => r.steps.find((s) => s.key === key);
    const [a, b, c, d, e, f] = ["a", "b", "c", "d", "e", "f"].map(get);
    if (!a || !b || !c || !d || !e || !f) continue;
    const w = STATE_WORKFLOWS;
    const ratio = r.n >= 100_000 ? 20 : 10;
    out.push({
      text: `N = ${r.n}: (b) with state ≤ 1/${ratio} of (a) stateless (1 % churn)`,
      measured: `${b.requests} vs ${a.requests} (1/${(a.requests / Math.max(1, b.requests)).toFixed(1)})`,
      met: b.requests * ratio <= a.requests,
    });
    const capF = 2 * w + 5;
    out.push({
      text: `N = ${r.n}: (f) unchanged, 127 s after the last change ≤ ${capF}`,
      measured: String(f.requests),
      met: f.requests <= capF,
    });
    out.push({
      text: `N = ${r.n}: (c) after a \`when\` edit ≤ (f) + 5 = ${f.requests + 5}`,
      measured: String(c.requests),
      met: c.requests <= f.requests + 5,
    });
    const alone = r.editedRuleAlone ?? 0;
    out.push({
      text: `N = ${r.n}: (d) after a \`select\` edit ≤ (f) + the rule's stateless cost ${alone} = ${f.requests + alone}`,
      measured: String(d.requests),
      met: d.requests <= f.requests + alone,
    });
    const applied = r.apply?.applied ?? 0;
    const capE = f.requests + 2 * w + 2 * Math.ceil(applied / 100);
    out.push({
      text: `N = ${r.n}: (e) after applying ${applied} changes ≤ (f) + 2·${w} + 2 per 100 applied = ${capE} (nobody else changed anything since)`,
      measured: String(e.requests),
      met: e.requests <= capE,
    });
    const peak = Math.max(
      ...r.steps.flatMap((s) => [s.result.maxRssBytes, s.stateless?.result.maxRssBytes ?? 0]),
      r.apply?.result.maxRssBytes ?? 0,
    );
    out.push({
      text: `N = ${r.n}: peak RSS < ${STATE_RSS_MB} MB in every run, with state or not, plan and apply (${r.rssScope})`,
      measured: `${(peak / 1048576).toFixed(0)} MB`,
      met: peak < STATE_RSS_MB * 1048576,
    });
    out.push({
      text: `N = ${r.n}: plans with state equal stateless plans (b–f)`,
      measured: r.equal ? "equal" : "different",
      met: r.equal,
    });
  }
  return out;
}

export function renderState(runs: StateRun[]): string {
  const out = [
    "## State between runs (`--state`)",
    "",
    "| N | run | requests | stateless | from the state | read again | peak RSS | wall |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of runs) {
    for (const s of r.steps) {
      const label = s.key ? `(${s.key}) ${s.what}` : s.what;
      const stateful = s.key !== "a";
      const mb = (b: number): string => `${(b / 1048576).toFixed(0)} MB`;
      const rss = s.stateless
        ? `${mb(s.result.maxRssBytes)} (stateless ${mb(s.stateless.result.maxRssBytes)})`
        : mb(s.result.maxRssBytes);
      out.push(
        `| ${r.n} | ${label} | ${s.requests} | ${s.stateless ? s.stateless.requests : "—"} | ${stateful ? s.result.fromState : "—"} | ${stateful ? s.result.readAgain : "—"} | ${rss} | ${(s.result.wallMs / 1000).toFixed(1)} s |`,
      );
    }
    const a = r.apply;
    if (a) {
      const counts = /^state: ([\d,]+) instances from the state, ([\d,]+) read again/m.exec(a.result.output);
      out.push(
        `| ${r.n} | apply --auto-approve with state (after ${a.churned} more changed): ${a.applied} applied | ${a.requests} | — | ${counts?.[1] ?? "?"} | ${counts?.[2] ?? "?"} | ${(a.result.maxRssBytes / 1048576).toFixed(0)} MB | ${(a.result.wallMs / 1000).toFixed(1)} s |`,
      );
    }
    if (r.editedRuleAlone !== undefined)
      out.push(`| ${r.n} | the \`select\`-edited rule alone, stateless | ${r.editedRuleAlone} | — | — | — | — | — |`);
  }
  out.push("", "| target | measured | met |", "|---|---|---|");
  for (const t of stateTargets(runs)) out.push(`| ${t.text} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`);
  return `${out.join("\n")}\n`;
}

/** Shared set-up of the apply tests: a sandbox over real HTTP, rules in a temp folder, plans from the real planner. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConnectionSettings } from "../../src/model/settings.js";
import { applyCommand, type ApplyCommandOptions } from "../../src/commands/apply.js";
import type { CommandIO } from "../../src/log/command-io.js";
import { planRuleSet } from "../../src/commands/plan.js";
import { writePlanFile } from "../../src/plan/write.js";
import type { Plan } from "../../src/plan/types.js";
import { loadRules } from "../../src/rules/index.js";
import type { RequestLogEntry, RunningSandbox } from "../../src/sandbox/index.js";
import { fixtureText } from "../helpers/rules.js";
import { tempDir as freshDir } from "../helpers/temp.js";

/** Complete step 20111 of running expense claims, save a note on purchase budget approvals, abort onboardings. */
export const MIXED_RULES = fixtureText("mixed");

export const ABORT_RULES = fixtureText("abort-onboardings");

export interface CapturedIO extends CommandIO {
  out: () => string;
  err: () => string;
}

export function captureIO(): CapturedIO {
  let out = "";
  let err = "";
  return {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    env: {},
    stdoutIsTTY: false,
    stderrIsTTY: false,
    out: () => out,
    err: () => err,
  };
}

/** No client-side rate limit in tests: the sandbox's own limit is what we test against. */
export function connection(sb: { baseUrl: string }, over: Partial<ConnectionSettings> = {}): ConnectionSettings {
  return {
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: 0,
    concurrency: 4,
    timeoutMs: 10_000,
    insecureHttp: false,
    ...over,
  };
}

export async function tempDir(): Promise<string> {
  return freshDir("flowrules-apply-");
}

export async function writeRules(dir: string, yaml: string): Promise<string> {
  const file = join(dir, "rules.yaml");
  await writeFile(file, yaml);
  return file;
}

/** Plans `yaml` against the sandbox with the real planner and writes plan.json into `dir`. */
export async function makePlan(sb: RunningSandbox, dir: string, yaml: string): Promise<{ file: string; plan: Plan }> {
  const rulesFile = await writeRules(dir, yaml);
  const loaded = await loadRules([rulesFile]);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
  const plan = await planRuleSet(loaded.ruleSet, connection(sb), captureIO(), { quiet: true });
  if (plan.errors.length > 0) throw new Error(plan.errors.map((e) => e.message).join("\n"));
  const file = join(dir, "plan.json");
  await writePlanFile(file, plan);
  return { file, plan };
}

export async function readJson(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
}

/** Runs `apply` in-process with test-friendly defaults (lock and runs under `dir`, fast retries). */
export function runApply(
  sb: { baseUrl: string },
  dir: string,
  opts: Partial<ApplyCommandOptions> & { paths: string[] },
  io: CapturedIO = captureIO(),
): Promise<number> {
  return applyCommand(
    {
      autoApprove: false,
      detailedExitcode: true,
      quiet: false,
      rules: [],
      connection: connection(sb),
      cwd: dir,
      ...opts,
      tuning: {
        verifyDelayMs: 20,
        ...opts.tuning,
        client: { retryBaseMs: 5, retryMaxDelayMs: 50, ...opts.tuning?.client },
      },
    },
    io,
  );
}

const isMutation = (r: RequestLogEntry): boolean => r.method === "POST";

/** Requests that took effect on the server: 2xx answers and mutations applied before a reset. */
const tookEffect = (r: RequestLogEntry): boolean => (r.status >= 200 && r.status < 300) || r.reset === true;

/**
 * How many requests that reached the service's logic carried each mutation, by key: `complete_step:<id>:<step>`,
 * `save_step:<id>:<step>`, `abort:<id>`. Exactly once = 1: an id sent again in a second bulk abort that took effect
 * counts twice, even though the service would not abort it twice — so this is stricter than the state alone.
 */
export function effectiveMutations(sb: RunningSandbox): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (k: string): void => void counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const r of sb.requests().filter(isMutation).filter(tookEffect)) {
    const m = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
    const body = r.body as { step_id?: number; mode?: string; ids?: number[] } | null;
    if (m) bump(`${body?.mode === "save" ? "save_step" : "complete_step"}:${m[1]}:${body?.step_id}`);
    else if (r.path.endsWith("/instances/bulk/abort")) for (const id of body?.ids ?? []) bump(`abort:${id}`);
  }
  return counts;
}

export function changeKey(c: { kind: string; instance_id: number; step_id?: number }): string {
  return c.kind === "abort" ? `abort:${c.instance_id}` : `${c.kind}:${c.instance_id}:${c.step_id}`;
}

export function posts(sb: RunningSandbox): RequestLogEntry[] {
  return sb.requests().filter(isMutation);
}

/** The final state the sandbox shows for one planned change. */
export function stateHolds(
  sb: RunningSandbox,
  c: { kind: string; instance_id: number; step_id?: number; request: { body: unknown } },
): boolean {
  const inst = sb.store.get(c.instance_id);
  if (!inst) return false;
  if (c.kind === "abort") return inst.abortedTime !== null;
  if (c.kind === "complete_step")
    return inst.stepCompletedTimes.has(c.step_id ?? -1) && !inst.activeStepIds.includes(c.step_id ?? -1);
  const body = c.request.body as { actions: Array<{ action_id: number; input_object: unknown }> };
  return body.actions.every((a) => JSON.stringify(inst.values.get(a.action_id)) === JSON.stringify(a.input_object));
}

/** A plan built by hand from sandbox data (for cases the planner would not produce), signed like a real one. */
export async function handPlan(
  sb: RunningSandbox,
  dir: string,
  changes: Plan["changes"],
  name = "hand-plan.json",
): Promise<{ file: string; plan: Plan }> {
  const plan: Plan = {
    format_version: 1,
    flowrules_version: "test",
    created_at: new Date().toISOString(),
    base_url: sb.baseUrl,
    rules_digest: "sha256:test",
    rules: [],
    changes,
    reports: [],
    errors: [],
    summary: {
      complete_step: changes.filter((c) => c.kind === "complete_step").length,
      save_step: changes.filter((c) => c.kind === "save_step").length,
      abort: changes.filter((c) => c.kind === "abort").length,
      reports: 0,
      errors: 0,
    },
  };
  const file = join(dir, name);
  await writePlanFile(file, plan);
  return { file, plan };
}

export function abortChange(
  rule: string,
  inst: { id: number; processId: number; name: string },
): Plan["changes"][number] {
  return {
    id: `${rule}:abort:${inst.id}`,
    rule,
    instance_id: inst.id,
    instance_name: inst.name,
    process_id: inst.processId,
    kind: "abort",
    request: { method: "POST", path: "/instances/bulk/abort", body: { ids: [inst.id] } },
    before: { status: "running" },
    after: { status: "aborted" },
    precondition: { status: "running" },
  };
}

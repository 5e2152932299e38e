/** Plans with and without a state dir, at the same moment, against one sandbox over loopback HTTP. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { openRunState, readInFull, type StateCounts, type StateSettings } from "../../src/state/index.js";

export async function tempDir(prefix = "flowrules-state-"): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export function client(sb: RunningSandbox, extra: { maxAttempts?: number; retryBaseMs?: number } = {}) {
  return createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0, ...extra });
}

/** The plan without what legitimately differs between two runs: when it was made and how many requests it took. */
export function comparable(plan: Plan): unknown {
  const { created_at: _created, summary, ...rest } = plan as Plan & { digest?: string };
  const { requests: _requests, ...counts } = summary as typeof summary & { requests?: number };
  const { digest: _digest, ...body } = rest as typeof rest & { digest?: string };
  return { ...body, summary: counts };
}

export async function statelessPlan(sb: RunningSandbox, ruleSet: RuleSet, now: Date): Promise<{ plan: Plan; requests: number }> {
  const c = client(sb);
  try {
    const plan = await runPlan({ client: c, ruleSet, now, optOutTag: "no-automation" });
    return { plan, requests: c.stats().total };
  } finally {
    await c.close();
  }
}

export interface StatefulRun {
  plan: Plan;
  requests: number;
  counts: StateCounts | undefined;
  warnings: string[];
}

/** A run with state, as `plan --state DIR` does it: open (lock), wrap the client, plan, write, release. */
export async function statefulPlan(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  settings: StateSettings,
  clientOptions: { maxAttempts?: number; retryBaseMs?: number } = {},
): Promise<StatefulRun> {
  const c = client(sb, clientOptions);
  const warnings: string[] = [];
  try {
    const run = await openRunState(settings, { baseUrl: c.baseUrl, apiKey: "sandbox-admin", now, rules: ruleSet.rules, version: "test", warn: (m) => warnings.push(m) });
    try {
      const plan = await runPlan({ client: run.wrap(c), ruleSet, now, optOutTag: "no-automation", onWarning: (m) => warnings.push(m) });
      if (readInFull(plan)) await run.commit();
      return { plan, requests: c.stats().total, counts: run.counts(), warnings };
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

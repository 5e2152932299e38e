/**
 * The multi-rule scenario: 24 rules over the four demo workflows, planned once against a sandbox of 20,000 instances.
 * Several rules share a selection (same workflow and `select`), some select a subset of another rule's selection
 * (plus `priority` or `active_step_id`), several read the same fields, and three reports group by `priority`. What is
 * measured is the plan's requests by kind against the floor of the distinct selections: each distinct selection
 * listed once, each field fetched once per instance that needs it, each record read once.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createClient } from "#flowrules/api/index.js";
import { runPlan } from "#flowrules/engine/plan-live.js";
import { loadRules } from "#flowrules/rules/index.js";
import { startSandbox } from "#flowrules/sandbox/index.js";
import { selectQuery } from "#flowrules/engine/select.js";
import type { SelectSpec } from "#flowrules/rules/types.js";
import { API_KEY, PAGE_SIZE } from "./scenario.js";

export const MULTI_RULE_N = 20_000;

const running = "{ status: [running] }";

export const MULTI_RULES_YAML = `version: 1
rules:
  # Expense claims (1042)
  - name: m-expense-priority
    workflow: 1042
    select: ${running}
    actions: [ { report: { group_by: priority, columns: [id, name, status] } } ]
  - name: m-expense-huge
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: ${running}
    when: fields.amount > 4900
    actions: [ abort ]
  - name: m-expense-by-currency
    workflow: 1042
    fields: { currency: { step: 20111, action: 50223 }, amount: { step: 20111, action: 50222 } }
    select: ${running}
    actions: [ { report: { group_by: currency, columns: [id, name, fields.amount] } } ]
  - name: m-expense-approve-small
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, currency: { step: 20111, action: 50223 } }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "ok" } } ] }
  - name: m-expense-waiting
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    actions: [ { report: { group_by: status, columns: [id, name, fields.amount] } } ]
  - name: m-expense-all-status
    workflow: 1042
    actions: [ { report: { group_by: status } } ]

  # Employee onboarding (1043)
  - name: m-onboarding-abandoned
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P90D }
    actions: [ abort ]
  - name: m-onboarding-by-tag
    workflow: 1043
    select: ${running}
    actions: [ { report: { group_by: tags, columns: [id, name, priority] } } ]
  - name: m-onboarding-urgent
    workflow: 1043
    select: { status: [running], priority: V }
    actions: [ { report: { group_by: tags, columns: [id, name, deadline] } } ]
  - name: m-onboarding-it
    workflow: 1043
    select: { status: [running], active_step_id: 20121 }
    actions: [ { report: { group_by: stage, columns: [id, name] } } ]
  - name: m-onboarding-contract
    workflow: 1043
    fields: { contract: { step: 20120, action: 50251 } }
    select: ${running}
    actions: [ { report: { group_by: contract } } ]
  - name: m-onboarding-status
    workflow: 1043
    actions: [ { report: { group_by: status } } ]

  # Purchase requests (1044)
  - name: m-purchase-large
    workflow: 1044
    fields: { quantity: { step: 20130, action: 50261 }, unit_price: { step: 20130, action: 50262 } }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity * fields.unit_price > 5000
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "large order" } } ] }
  - name: m-purchase-priority
    workflow: 1044
    select: ${running}
    actions: [ { report: { group_by: priority, columns: [id, name] } } ]
  - name: m-purchase-value
    workflow: 1044
    fields: { quantity: { step: 20130, action: 50261 }, unit_price: { step: 20130, action: 50262 } }
    select: ${running}
    when: fields.quantity * fields.unit_price > 40000
    actions: [ { report: { group_by: status, columns: [id, name, fields.quantity, fields.unit_price] } } ]
  - name: m-purchase-decision
    workflow: 1044
    fields: { decision: { step: 20131, action: 50263 } }
    select: { status: [running], active_step_id: 20131 }
    actions: [ { report: { group_by: decision } } ]
  - name: m-purchase-completed
    workflow: 1044
    select: { status: [completed] }
    actions: [ { report: { group_by: status } } ]
  - name: m-purchase-ended
    workflow: 1044
    select: { status: [completed, aborted] }
    actions: [ { report: { group_by: status } } ]

  # Access requests (1045)
  - name: m-access-urgent
    workflow: 1045
    fields: { risk: { step: 20141, action: 50272 } }
    select: { status: [running], active_step_id: 20141 }
    when: '"urgent" in tags and fields.risk > 5'
    actions: [ { report: { group_by: priority } } ]
  - name: m-access-review-high
    workflow: 1045
    select: { status: [running], active_step_id: 20141, priority: H }
    actions: [ { report: { group_by: tags, columns: [id, name] } } ]
  - name: m-access-priority
    workflow: 1045
    select: ${running}
    actions: [ { report: { group_by: priority, columns: [id, name, status] } } ]
  - name: m-access-risky
    workflow: 1045
    fields: { risk: { step: 20141, action: 50272 } }
    select: ${running}
    when: fields.risk > 8
    actions: [ abort ]
  - name: m-access-system
    workflow: 1045
    fields: { system: { step: 20140, action: 50270 } }
    select: ${running}
    actions: [ { report: { group_by: system } } ]
  - name: m-access-review-system
    workflow: 1045
    fields: { system: { step: 20140, action: 50270 }, risk: { step: 20141, action: 50272 } }
    select: { status: [running], active_step_id: 20141 }
    actions: [ { report: { group_by: system, columns: [id, name, fields.risk] } } ]
`;

export interface RequestCounts {
  total: number;
  list: number;
  field: number;
  read: number;
  other: number;
}

export interface MultiRuleRun {
  n: number;
  rules: number;
  /** distinct (workflow, select) pairs */
  distinctSelections: number;
  requests: RequestCounts;
  /** each distinct selection listed once (its pages), nothing else: the least any planner pays to list */
  floorLists: number;
  /** the same plan's requests before the whole-rule-set query planner (measured at this N only) */
  before?: RequestCounts;
  wallMs: number;
  changes: number;
  errors: number;
}

/**
 * Measured with this scenario on 414913f (before the query planner): `npm run bench`, seed 1, N = 20,000. Kept as
 * figures because the code that made them is gone.
 */
export const BEFORE: Record<number, RequestCounts> = {
  20_000: { total: 12_111, list: 123, field: 6, read: 11_982, other: 0 },
};

function countsOf(
  log: ReadonlyArray<{ method: string; path: string; query: Record<string, string | string[]> }>,
): RequestCounts {
  const c: RequestCounts = { total: log.length, list: 0, field: 0, read: 0, other: 0 };
  for (const r of log) {
    // the newest instance listed to read a workflow's structure is not a selection's list page
    if (
      r.method === "GET" &&
      r.path.includes("/v2/processes/") &&
      r.query.page_size === "1" &&
      r.query.ordering === "-started_time"
    )
      c.other += 1;
    else if (r.method === "GET" && r.path.includes("/v2/processes/")) c.list += 1;
    else if (r.method === "GET" && /\/steps\/\d+\/actions\/\d+\/$/.test(r.path)) c.field += 1;
    else if (r.method === "GET" && /\/instances\/\d+\/$/.test(r.path)) c.read += 1;
    else c.other += 1;
  }
  return c;
}

export async function runMultiRule(
  opts: { seed: number; latencyMs: number; n: number },
  log: (line: string) => void,
): Promise<MultiRuleRun> {
  const { seed, latencyMs, n } = opts;
  const dir = await mkdtemp(join(tmpdir(), "flowrules-bench-multi-"));
  const sb = await startSandbox({ port: 0, instances: n, seed, latencyMs });
  try {
    await writeFile(join(dir, "multi.yaml"), MULTI_RULES_YAML);
    const loaded = await loadRules([dir]);
    if (!loaded.ruleSet)
      throw new Error(`multi-rule scenario does not load: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
    const ruleSet = loaded.ruleSet;
    const now = new Date();
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: API_KEY, rateLimitPerMin: 0 });
    sb.clearRequests();
    const started = performance.now();
    const plan = await runPlan({ client, ruleSet, now });
    const wallMs = performance.now() - started;
    const requests = countsOf(sb.requests());

    // the floor: one count per distinct selection (asked apart, not counted above)
    const distinct = new Map<string, { workflow: number; select: SelectSpec }>();
    for (const r of ruleSet.rules) {
      const workflow = "id" in r.workflow ? r.workflow.id : -1;
      distinct.set(JSON.stringify([workflow, Object.entries(r.select).sort(([a], [b]) => (a < b ? -1 : 1))]), {
        workflow,
        select: r.select,
      });
    }
    let floorLists = 0;
    for (const { workflow, select } of distinct.values()) {
      const pages = client.instancePages(workflow, selectQuery(select, now))[Symbol.asyncIterator]();
      const first = await pages.next();
      await pages.return?.(undefined);
      const count = first.done ? 0 : (first.value.count ?? first.value.results.length);
      floorLists += Math.max(1, Math.ceil(count / PAGE_SIZE));
    }
    await client.close();
    const before = seed === 1 ? BEFORE[n] : undefined;
    const run: MultiRuleRun = {
      n,
      rules: ruleSet.rules.length,
      distinctSelections: distinct.size,
      requests,
      floorLists,
      ...(before ? { before } : {}),
      wallMs,
      changes: plan.changes.length,
      errors: plan.errors.length,
    };
    log(
      `  ${run.rules} rules, ${run.distinctSelections} distinct selections: ${requests.total} requests ` +
        `(lists ${requests.list}, fields ${requests.field}, reads ${requests.read}); list floor ${floorLists}; ` +
        (before
          ? `before ${before.total} (lists ${before.list}, fields ${before.field}, reads ${before.read}); `
          : "") +
        `${plan.errors.length} errors in ${(wallMs / 1000).toFixed(1)} s`,
    );
    return run;
  } finally {
    await sb.close();
    await rm(dir, { recursive: true, force: true });
  }
}

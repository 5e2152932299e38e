/**
 * `flowrules explain`: one live instance, every loaded rule of its workflow, and why each matches or not. Reads only:
 * GET /instances/{id}/?inject_values=true, plus GET /processes/ when a rule names its workflow by name. Never a
 * mutation, whatever the rules say.
 */
import { clientFrom, FlowrulesApiError, type ApiClient } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { planBindings } from "../engine/context.js";
import { EXPLAIN_FORMATS } from "../render/explain/index.js";
import { explainRule, instanceFromRecord, workflowIdOf, type Explanation } from "../engine/explain/index.js";
import { resolveWorkflows } from "../engine/resolve.js";
import type { RuleSet } from "../rules/types.js";
import { useColor, type CommandIO } from "../log/command-io.js";
import { loadRuleSetOrReport } from "./load.js";
import { checkRuleStructure, hasNames } from "../rules/structure-checks.js";
import { structureFromSnapshot } from "../model/structure.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { namesOfSnapshot, namesTable, type NamedRule, type NameSource } from "../engine/names.js";

export type { ExplainFormat } from "../render/explain/index.js";
import type { ExplainFormat } from "../render/explain/index.js";

export interface ExplainCommandOptions {
  paths: string[];
  instance: number;
  rules: string[];
  format: ExplainFormat;
  connection: ConnectionSettings;
  /** the instant relative dates and $now() resolve against; default: now */
  now?: Date;
  /** the opt-out tag in effect (undefined: off) */
  optOutTag?: string;
  /** the profile that chose the service, named beside it */
  profile?: string;
}

/** `--instance` must be a positive whole number: it becomes a path segment. */
export function parseInstanceId(raw: unknown): number {
  const s = String(raw ?? "").trim();
  if (!/^\d+$/.test(s) || Number(s) < 1 || !Number.isSafeInteger(Number(s))) {
    throw new UserError(`--instance must be an instance id (a positive whole number), got ${JSON.stringify(raw)}`);
  }
  return Number(s);
}

async function explainWith(
  client: ApiClient,
  ruleSet: RuleSet,
  opts: ExplainCommandOptions,
  io: CommandIO,
): Promise<Explanation | undefined> {
  let record;
  try {
    record = await client.getInstance(opts.instance, { injectValues: true });
  } catch (err) {
    if (!(err instanceof FlowrulesApiError)) throw err;
    io.stderr(`flowrules explain: cannot read instance ${opts.instance}: ${err.message}\n`);
    return undefined;
  }
  const processId = workflowIdOf(record);
  if (processId === undefined) {
    io.stderr(
      `flowrules explain: instance ${opts.instance} names no workflow (process ${JSON.stringify(record.process)})\n`,
    );
    return undefined;
  }
  const data = instanceFromRecord(record, processId);
  const now = opts.now ?? new Date();
  const bindings = planBindings(now);
  // GET /processes/ only when some rule names its workflow by name (resolveWorkflows asks lazily)
  const resolved = await resolveWorkflows(client, ruleSet.rules);
  const out: Explanation = {
    now: now.toISOString(),
    base_url: client.baseUrl,
    ...(opts.profile ? { profile: opts.profile } : {}),
    instance: {
      id: data.id,
      name: data.name,
      status: data.status,
      process_id: processId,
      active_step_ids: record.active_step_ids ?? [],
      tags: record.tags ?? [],
    },
    rules: [],
    other_rules: [],
  };
  const named: NamedRule[] = [];
  let workflowName: string | undefined;
  for (const rule of ruleSet.rules) {
    const r = resolved.get(rule.name);
    if (!r || "error" in r) {
      out.other_rules.push({ rule: rule.name, workflow: r && "error" in r ? `unresolved: ${r.error}` : "unresolved" });
      continue;
    }
    // a rule over several workflows is explained against the instance's own, when it is one of them
    const one: { id: number; name?: string } | undefined = "many" in r ? r.many.find((m) => m.id === processId) : r;
    if (!one || one.id !== processId) {
      const where =
        "many" in r
          ? r.all
            ? "every workflow the key sees"
            : `workflows ${r.many.map((m) => m.id).join(", ")}`
          : `workflow ${r.id}`;
      out.other_rules.push({ rule: rule.name, workflow: where });
      continue;
    }
    // steps and fields named in the rule resolve against this instance's own snapshot (no further request)
    const structure = structureFromSnapshot(
      { id: processId, name: one.name ?? `workflow ${processId}`, folder: null },
      null,
      record.process_snapshot,
    );
    // a record without a snapshot cannot check ids; only names need it
    const fit =
      structure.steps.length === 0 && !hasNames(rule) ? { rule, issues: [] } : checkRuleStructure(rule, structure);
    if (!fit.rule) {
      const first = fit.issues.find((i) => i.severity === "error");
      out.other_rules.push({
        rule: rule.name,
        workflow: `does not fit workflow ${one.id}: ${first?.message ?? "structure"}`,
      });
      continue;
    }
    out.rules.push(
      await explainRule(fit.rule, data, {
        now,
        workflowId: one.id,
        bindings,
        ...(opts.optOutTag ? { optOutTag: opts.optOutTag } : {}),
      }),
    );
    named.push({ name: fit.rule.name, workflowId: one.id, fields: fit.rule.fields });
    workflowName ??= one.name;
  }
  // names beside ids, from the instance's own snapshot (and a workflow name the rules resolved): no further request
  const sources: NameSource[] = [
    ...(workflowName !== undefined ? [{ name: workflowName, steps: new Map(), fields: new Map() }] : []),
    namesOfSnapshot(processId, record.process_snapshot),
  ];
  const fieldsRead = out.rules.flatMap((r) => r.fields);
  const names = namesTable(
    named,
    out.rules.flatMap((r) => r.changes),
    new Map([[processId, sources]]),
    [
      {
        workflowId: processId,
        steps: [...out.instance.active_step_ids, ...fieldsRead.map((f) => f.step)],
        fields: fieldsRead.map((f) => f.action),
      },
    ],
  );
  if (names.length > 0) out.names = names;
  return out;
}

export async function explainCommand(opts: ExplainCommandOptions, io: CommandIO): Promise<number> {
  const ruleSet = await loadRuleSetOrReport(opts.paths, opts.rules, io);
  if (!ruleSet) return EXIT_ERROR;
  const client = clientFrom(opts.connection, {
    onEvent: clientEventLogger(io.log ?? nullLogger),
  });
  try {
    const explanation = await explainWith(client, ruleSet, opts, io);
    io.log?.event("explain.finished", {
      instance: opts.instance,
      rules: explanation?.rules.length ?? 0,
      requests: client.stats().total,
    });
    if (!explanation) return EXIT_ERROR;
    io.stdout(EXPLAIN_FORMATS[opts.format](explanation, { color: useColor(io) }));
    return EXIT_OK;
  } catch (err) {
    if (!(err instanceof FlowrulesApiError)) throw err;
    io.stderr(`flowrules explain: ${err.message}\n`);
    return EXIT_ERROR;
  } finally {
    await client.close();
  }
}

/**
 * `flowrules revert JOURNAL_OR_PLAN [--out FILE]` and `--state DIR --cycle ID` (docs/forecast.md, "Revert"): an
 * ordinary plan file that sets each field an applied save wrote back to its `before` value, where the field still
 * holds what was written (the instance read now). A field someone changed since is left and listed; completed steps
 * and aborted instances are listed as not reversible (the service has no endpoint to reopen a step or restart an
 * instance), with their instances. The plan is reviewed with `show` and applied with `apply`, as every plan.
 */
import { existsSync } from "node:fs";
import { defined } from "../model/defined.js";
import { join, resolve } from "node:path";
import { clientFrom } from "../api/connection.js";
import type { ApiClient } from "../api/index.js";
import { parseCompleteStepBody } from "../api/step-body.js";
import { MUTATING_KINDS, mutatingKind } from "../actions/index.js";
import { journalEvents } from "../apply/journal.js";
import type { CommandIO } from "../log/command-io.js";
import { EXIT_OK, UserError } from "../model/errors.js";
import { plainValue } from "../model/field-values.js";
import { isRecord, errorMessage } from "../model/guards.js";
import type { ConnectionSettings } from "../model/settings.js";
import { fieldTypeOf, sameValue, type FieldType } from "../model/values.js";
import { VERSION } from "../model/version.js";
import { loadPlanFile } from "../plan/read.js";
import { sameService } from "../model/service.js";
import type { Plan, PlannedChange, RevertNote, RulePlanSummary } from "../plan/types.js";
import { writePlanFile } from "../plan/write.js";
import { checkOutputFile } from "../fs/write-file.js";
import { PLAN_FORMATS } from "../render/plan/index.js";
import { useColor } from "../log/command-io.js";
import { toInputObject } from "../rule-tests/input-objects.js";
import { watchPaths } from "../watch/cycles.js";
import type { InstanceRecord } from "../api/schemas.js";

export interface RevertCommandOptions {
  /** a plan file or its journal (`<plan>.journal.jsonl`) */
  source?: string;
  /** a watcher's state dir and one of its cycles (`flowrules history`) */
  stateDir?: string;
  cycle?: string;
  out?: string;
  connection: ConnectionSettings;
  quiet: boolean;
  cwd?: string;
}

const JOURNAL_SUFFIX = ".journal.jsonl";

/** The plan file and its journal named by the arguments. */
function sourceFiles(opts: RevertCommandOptions): { planFile: string; journalFile: string } {
  const cwd = opts.cwd ?? process.cwd();
  if (opts.cycle !== undefined || opts.stateDir !== undefined) {
    if (opts.cycle === undefined || opts.stateDir === undefined)
      throw new UserError(
        "revert of a watcher's cycle needs both --state DIR and --cycle ID (the cycle's folder, as `flowrules history` lists it)",
      );
    if (opts.source !== undefined)
      throw new UserError("give a plan or journal file, or --state DIR --cycle ID, not both");
    if (!/^[\w.-]+$/.test(opts.cycle))
      throw new UserError(
        `--cycle ${JSON.stringify(opts.cycle)} is not a cycle folder name (as \`flowrules history\` lists it)`,
      );
    const planFile = join(watchPaths(resolve(cwd, opts.stateDir)).cycles, opts.cycle, "plan.json");
    if (!existsSync(planFile))
      throw new UserError(
        `no cycle ${opts.cycle} in ${opts.stateDir} (flowrules history --state ${opts.stateDir} lists them)`,
      );
    return { planFile, journalFile: `${planFile}${JOURNAL_SUFFIX}` };
  }
  if (opts.source === undefined) throw new UserError("revert needs a plan or journal file, or --state DIR --cycle ID");
  const given = resolve(cwd, opts.source);
  const planFile = given.endsWith(JOURNAL_SUFFIX) ? given.slice(0, -JOURNAL_SUFFIX.length) : given;
  const journalFile = `${planFile}${JOURNAL_SUFFIX}`;
  if (!existsSync(planFile))
    throw new UserError(`no plan ${opts.source.endsWith(JOURNAL_SUFFIX) ? "beside the journal " : ""}${planFile}`);
  if (!existsSync(journalFile))
    throw new UserError(`no journal ${journalFile}: that plan was never applied, so there is nothing to revert`);
  return { planFile, journalFile };
}

/** The ids of the plan's changes its journal records as done (runs of this very plan only). */
function appliedIds(journalFile: string, digest: string): Set<string> {
  const done = new Set<string>();
  let ours = false;
  for (const e of journalEvents(journalFile)) {
    if (e.event === "start") ours = e.plan === digest;
    else if (ours && e.event === "done") done.add(e.change);
  }
  return done;
}

/** The input object and type of one field of a record's snapshot (undefined: the field holds no value). */
function fieldOf(
  record: InstanceRecord,
  step: number,
  action: number,
): { value: unknown; type: FieldType | undefined } {
  const snap = record.process_snapshot;
  const steps = isRecord(snap) && Array.isArray(snap.steps) ? snap.steps : [];
  for (const s of steps) {
    if (!isRecord(s) || s.id !== step || !Array.isArray(s.actions)) continue;
    for (const a of s.actions) {
      if (isRecord(a) && a.id === action)
        return { value: a.input_object ?? undefined, type: fieldTypeOf(a, a.settings) };
    }
  }
  return { value: undefined, type: undefined };
}

/**
 * The input object that empties a field, per documented type. The spec leaves the type of `input_object` open and
 * shows no empty value for any field type; the sandbox, faithful to the service as docs/service.md reads it, takes
 * `null` as "no value" for each of the five documented types (the field then has no value in the record and the
 * form-field listing leaves the instance out). A field whose type the service does not tell has no known empty value:
 * a revert lists it as not reversible instead of guessing (docs/forecast.md, "Revert").
 */
export const EMPTY_INPUT: Readonly<Record<FieldType, null>> = {
  text: null,
  number: null,
  date: null,
  radio: null,
  checklist: null,
};

const shown = (v: unknown): string => (v === undefined || v === null ? "(empty)" : JSON.stringify(v));

/** The key a change's before/after uses for one sent field: `action <id>`, or the alias whose value it sent. */
function keyOf(change: PlannedChange, actionId: number, sentPlain: unknown, used: Set<string>): string | undefined {
  const direct = `action ${actionId}`;
  if (direct in change.after) return direct;
  const alias = Object.keys(change.after).find(
    (k) => k.startsWith("fields.") && !used.has(k) && sameValue(change.after[k], sentPlain),
  );
  if (alias) used.add(alias);
  return alias;
}

interface Reverted {
  changes: PlannedChange[];
  notReversible: RevertNote[];
  left: RevertNote[];
}

async function revertChanges(client: ApiClient, applied: PlannedChange[], now: Date): Promise<Reverted> {
  const out: Reverted = { changes: [], notReversible: [], left: [] };
  const note = (c: PlannedChange, reason: string, field?: string): RevertNote => ({
    rule: c.rule,
    instance_id: c.instance_id,
    ...defined({ instance_name: c.instance_name }),
    kind: c.kind,
    ...defined({ step_id: c.step_id, field }),
    reason,
  });
  const records = new Map<number, InstanceRecord>();
  for (const c of applied) {
    const body = parseCompleteStepBody(c.request.body);
    if (mutatingKind(c.kind).changeTarget(c) === "instance") {
      out.notReversible.push(note(c, "the service has no endpoint to restart an instance"));
      continue;
    }
    if (!body.success || body.data.mode !== "save") {
      out.notReversible.push(note(c, "the service has no endpoint to reopen a step"));
      continue;
    }
    const step = body.data.step_id;
    let record = records.get(c.instance_id);
    if (!record) {
      record = await client.getInstance(c.instance_id, { injectValues: true });
      records.set(c.instance_id, record);
    }
    const running = !record.completed_time && !record.aborted_time;
    const active = running && (record.active_step_ids ?? []).includes(step);
    const used = new Set<string>();
    const actions: Array<{ action_id: number; input_object: unknown }> = [];
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (const sent of body.data.actions ?? []) {
      const sentPlain = plainValue(sent.input_object) ?? null;
      const key = keyOf(c, sent.action_id, sentPlain, used);
      const field = `action ${sent.action_id}`;
      if (!active) {
        out.left.push(
          note(
            c,
            running ? "the step is no longer active: a save cannot reach it" : "the instance is no longer running",
            field,
          ),
        );
        continue;
      }
      if (key === undefined || !(key in c.before)) {
        out.left.push(note(c, "its value before the change was not read when it was planned", field));
        continue;
      }
      const now_ = fieldOf(record, step, sent.action_id);
      if (!sameValue(now_.value, sent.input_object, now_.type)) {
        out.left.push(
          note(
            c,
            `changed since by someone else: now ${shown(plainValue(now_.value, now_.type))}, written ${shown(sentPlain)}`,
            field,
          ),
        );
        continue;
      }
      const was = c.before[key];
      const empty = was === null || was === undefined;
      if (empty && (now_.type === undefined || !(now_.type in EMPTY_INPUT))) {
        out.notReversible.push(
          note(
            c,
            "the field was empty before and the service does not say its type, so the value that empties it is not known",
            field,
          ),
        );
        continue;
      }
      const input = empty ? null : toInputObject(was, now_.type, now);
      actions.push({ action_id: sent.action_id, input_object: input });
      before[field] = plainValue(now_.value, now_.type) ?? null;
      after[field] = input === null ? null : (plainValue(input, now_.type) ?? null);
    }
    if (actions.length === 0) continue;
    const rule = `${c.rule}.revert`;
    out.changes.push({
      id: `${rule}:${c.kind}:${c.instance_id}:${step}`,
      rule,
      instance_id: c.instance_id,
      ...defined({ instance_name: c.instance_name, process_id: c.process_id }),
      kind: c.kind,
      step_id: step,
      request: {
        method: "POST",
        path: `/instances/${c.instance_id}/complete_step/`,
        body: { step_id: step, actions, mode: "save" },
      },
      before,
      after,
      precondition: {
        status: "running",
        active_step_id: step,
        ...(record.last_updated_time ? { last_updated_time: record.last_updated_time } : {}),
      },
    } as PlannedChange);
  }
  return out;
}

export async function revertCommand(opts: RevertCommandOptions, io: CommandIO): Promise<number> {
  const { planFile, journalFile } = sourceFiles(opts);
  const out = resolve(opts.cwd ?? process.cwd(), opts.out ?? planFile.replace(/(\.json)?$/, ".revert.json"));
  await checkOutputFile(out);
  const loaded = await loadPlanFile(planFile, opts.connection.baseUrl, undefined, { toShow: true });
  const source = loaded.plan;
  if (!sameService(source.base_url, opts.connection.baseUrl)) {
    throw new UserError(
      `${planFile} was applied to ${source.base_url}, but the configured service is ${opts.connection.baseUrl}; a revert reads and writes where the plan was applied`,
    );
  }
  const done = appliedIds(journalFile, loaded.digest);
  const applied = source.changes.filter((c) => done.has(c.id) && c.audit !== true);
  const client = clientFrom(opts.connection);
  let result: Reverted;
  const now = new Date();
  try {
    result = await revertChanges(client, applied, now);
  } catch (err) {
    throw new UserError(`cannot read the instances to revert: ${errorMessage(err)}; no revert plan was written`);
  } finally {
    await client.close();
  }
  const byRule = new Map<string, PlannedChange[]>();
  for (const c of result.changes) byRule.set(c.rule, [...(byRule.get(c.rule) ?? []), c]);
  const rules: RulePlanSummary[] = [...byRule].map(([name, cs]) => ({
    name,
    workflow_id: source.rules.find((r) => `${r.name}.revert` === name)?.workflow_id ?? null,
    selected: cs.length,
    matched: cs.length,
    changes: cs.length,
    skipped: 0,
    status: "ok",
  }));
  const summary: Plan["summary"] = { reports: 0, errors: 0 };
  for (const k of MUTATING_KINDS) summary[k] = result.changes.filter((c) => c.kind === k).length;
  const plan: Plan = {
    format_version: 1,
    flowrules_version: VERSION,
    created_at: now.toISOString(),
    base_url: source.base_url,
    rules_digest: `revert of ${loaded.digest}`,
    rules,
    changes: result.changes,
    reports: [],
    errors: [],
    summary,
    ...defined({ names: source.names }),
    revert: { source: planFile, source_digest: loaded.digest, not_reversible: result.notReversible, left: result.left },
  };
  await writePlanFile(out, plan);
  io.stdout(PLAN_FORMATS.text(plan, { color: useColor(io), planFile: out }));
  if (!opts.quiet)
    io.stderr(
      `revert plan written to ${out}: review it with \`flowrules show ${out}\`, apply it with \`flowrules apply ${out}\`\n`,
    );
  return EXIT_OK;
}

/**
 * The contract of an action kind. Each module in src/actions/ exports one object satisfying `MutatingActionKind` or
 * `ReportActionKind` and owns everything about its kind: the schema fragment editors see, compiling the YAML entry,
 * planning one matched instance, how its changes read in every view, what it clashes with, how apply sends it and
 * decides whether it took effect. The engine, the renderers, the plan-file checks and the rule-test schema read the
 * registry (index.ts); none of them names a kind. CONTRIBUTING.md walks through adding one.
 */
import type { ReportEntries, ReportEntry } from "./report-entries.js";
import type { ApiClient, InstanceRecord } from "../api/index.js";
import type { CompiledValue, FieldRef, SourcePos } from "../model/rule-types.js";
import type { PlannedChange, PlannedReport } from "../plan/types.js";
import type { InstanceData } from "./instance.js";
import type { JsonSchema } from "./schema-types.js";

/** The JSONata context of `when` and of templated values. */
export interface EvalContext {
  instance: Record<string, unknown>;
  fields: Record<string, unknown>;
  snapshot: unknown;
  tags: string[];
  now: string;
}

/** Helpers bound to one `actions:` entry while its rule is compiled; paths are relative to the entry's body. */
export interface ActionCompileContext {
  /** `rule "x"` or `rules[3]`, for messages */
  label: string;
  /** declared field aliases; undefined when `fields` is broken (alias checks would only echo that error) */
  aliases?: string[];
  /** position of the entry itself (`- complete_step: …`) */
  pos: SourcePos;
  /** reports an error at a place inside the entry's body */
  error(code: string, rel: Array<string | number>, message: string): void;
  /** compiles a value whose strings may hold `{{ jsonata }}` templates; undefined after reporting what is wrong */
  value(raw: unknown, rel: Array<string | number>, where: string): CompiledValue | undefined;
  /**
   * A step written as an id or a name, at `rel`: its key (the id, or a stand-in for the name until the workflow's
   * structure resolves it), recorded for the structure checks; undefined when it is neither.
   */
  stepRef(raw: unknown, rel: Array<string | number>): number | undefined;
  /** A form field of the step `step` (a key from stepRef), with the value sent to it when there is one. */
  fieldRef(
    raw: unknown,
    rel: Array<string | number>,
    step: number,
    value?: { value: CompiledValue; rel: Array<string | number> },
  ): number | undefined;
}

/** What an action sees of its rule while planning. */
export interface RuleInfo {
  name: string;
  fields: Record<string, FieldRef>;
  /** present when the rule spans several workflows (a list, or "*") */
  workflows?: readonly unknown[] | "*";
}

export interface ActionPlanInput<A> {
  rule: RuleInfo;
  action: A;
  data: InstanceData;
  ctx: EvalContext;
  /** evaluates a compiled value (templates) against this instance */
  evaluate: (value: CompiledValue) => Promise<unknown>;
}

/**
 * The result of planning one action on one matched instance: a change, or a reason it does not apply
 * (instance not running, step not active) that the plan shows as skipped rather than failing. The reason is
 * counted as written, per rule ("6 skipped: the step already holds these values"): it names no id, so that the
 * matches skipped for one reason are counted together.
 */
export type ActionOutcome = { change: PlannedChange } | { skipped: string };

/** How a mutating kind presents itself in renderers: one symbol, a legend entry, and its summary phrase. */
export interface KindPresentation {
  symbol: string;
  legend: string;
  /** e.g. n => `${n} steps to complete` */
  summary: (n: number) => string;
  /** colour name for TTY output */
  colour: "green" | "yellow" | "red" | "cyan";
}

/** A change as every view names it. */
export interface ChangeDescription {
  /** short label in plan lists: "complete step 20111", `complete step 20111 "Manager approval"`, "abort" */
  label: string;
  /** what it does to its instance, for conflict messages: "completes step 20111", "aborts it" */
  effect: string;
}

/** Did a change take effect? Decided from the instance's record alone. */
export interface Effect {
  applied: boolean;
  /** what the record showed, for the journal and messages */
  detail: string;
}

/**
 * What a change occupies in its instance. Changes of one instance clash when either takes the whole instance or
 * both take the same step; two identical whole-instance changes (two rules aborting one instance) are one change.
 */
export type ChangeTarget = { step: number } | "instance";

/** Adds a refusal of a plan-file change at a path inside it. */
export type ChangeIssue = (path: PropertyKey[], message: string) => void;

interface ActionKindBase<K extends string, A extends { kind: K; pos: SourcePos }> {
  kind: K;
  /** one sentence for editors' hover text and the rule reference */
  description: string;
  /** JSON Schema of the entry `{ <kind>: {...} }` (or of the bare string, see `bare`) */
  schema: JsonSchema;
  /** the kind may be written as a bare string (`- abort`) */
  bare: boolean;
  /** the entry's body (already schema-checked) to the compiled action; undefined after reporting what is wrong */
  compile(body: Record<string, unknown>, ctx: ActionCompileContext): A | undefined;
  /** form fields whose current values planning reads (hydrated before evaluation) */
  reads(action: A): FieldRef[];
  /**
   * The instance keys the action reads as they are, beside `when` and templates (which are read from their
   * expressions): record keys (`priority`, `deadline`) and `fields.<alias>`, normalised by `compile`. A key the list
   * element does not carry makes planning read the instance's record (src/rules/needs.ts).
   */
  recordKeys(action: A): string[];
  /**
   * The action with its step and field keys (from stepRef / fieldRef) replaced by the ids the workflow's structure
   * resolved them to; absent for a kind that names no step or field.
   */
  mapRefs?(action: A, id: (key: number) => number): A;
}

export interface MutatingActionKind<K extends string, A extends { kind: K; pos: SourcePos }> extends ActionKindBase<
  K,
  A
> {
  mutating: true;
  presentation: KindPresentation;
  /** the step the action acts on, or the whole instance: static conflicts and step-activity lookups */
  target(action: A): ChangeTarget;
  /** verb phrase for validation warnings: "completes step 20111", "aborts instances" */
  phrase(action: A): string;
  plan(input: ActionPlanInput<A>): Promise<ActionOutcome>;
  /** its words; `names` holds what the plan calls its step, when the plan knows (src/plan/names.ts) */
  describe(change: PlannedChange, names?: { step?: string }): ChangeDescription;
  changeTarget(change: PlannedChange): ChangeTarget;
  /** plan-file check: the request says exactly what kind, instance and step say */
  checkChange(change: PlannedChange, issue: ChangeIssue): void;
  /** did the change take effect, judged from a fresh record (after an unknown outcome, or an earlier run's intent) */
  effect(change: PlannedChange, record: InstanceRecord): Effect;
  /**
   * How apply sends the kind's changes: `each`, one request per change (the changes of one instance in plan order);
   * `batch`, many instances per request.
   */
  send: EachSender | BatchSender;
}

export interface EachSender {
  mode: "each";
  /** sends one change; resolves with the instance record the service answered */
  send(client: ApiClient, change: PlannedChange): Promise<InstanceRecord>;
}

/** How messages name a batch kind's request and its two ends (abort: "bulk abort", "aborted", "not aborted"). */
export interface BatchWords {
  /** the request, in messages: "bulk abort batch 3: …" */
  request: string;
  /** an instance the kind took effect on: "listed as aborted since" */
  done: string;
  /** a change the batch did not act on (status `not_acted`): "2 not aborted" */
  notDone: string;
}

export interface BatchSender {
  mode: "batch";
  words: BatchWords;
  /** sends one batch; resolves with the instance ids the service says it acted on */
  send(client: ApiClient, instanceIds: number[]): Promise<number[]>;
  /** after an unknown outcome: the instances (of these workflows) on which the kind took effect since `since` */
  tookEffectSince(client: ApiClient, processIds: number[], since: Date): Promise<Set<number>>;
  /** why an id the batch did not return was not acted on, judged from its record */
  whyNot(record: InstanceRecord): string;
}

export type { ReportEntries, ReportEntry } from "./report-entries.js";

export interface ReportActionKind<K extends string, A extends { kind: K; pos: SourcePos }> extends ActionKindBase<
  K,
  A
> {
  mutating: false;
  entry(input: ActionPlanInput<A>): ReportEntry;
  /** the report from the entries of its matched instances, as the run kept them (./report-entries.ts) */
  build(rule: RuleInfo, action: A, entries: ReportEntries): PlannedReport;
}

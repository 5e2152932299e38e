/**
 * How long a step has waited: `$waitingSince(step?)`, `$waitingDays(step?)`, `$waitingHours(step?)`
 * (docs/writing-rules.md, "How long a step has waited").
 *
 * A step became active when the step before it completed. Steps run in `position` order (docs/design.md,
 * "process_snapshot"), so "the step before" is the latest completion among the steps of a lower position; a step
 * with none before it (the first step, or one whose earlier steps never completed) has waited since the instance's
 * `started_time`. Completion times come from the full record read with `steps_time_frame=true`, which the engine
 * asks for exactly when a rule calls one of these (the rule's `needs.times`). A step that is not active has not
 * waited: the functions return nothing (undefined), so `$waitingDays("X") > 2` is simply false for it.
 */
import type { CompiledRule } from "../rules/types.js";
import type { InstanceData } from "../actions/instance.js";
import type { SnapshotStep } from "../api/schemas.js";

const MS_PER_DAY = 86_400_000;
const MS_PER_HOUR = 3_600_000;

function timeOf(iso: unknown): number | undefined {
  if (typeof iso !== "string") return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

function norm(s: string): string {
  return s.trim().toLowerCase();
}

/** The step a call names: an id, a name resolved when the rule was fitted to its workflow, else the snapshot's. */
function stepIdOf(rule: CompiledRule, steps: readonly SnapshotStep[], arg: unknown): number {
  if (typeof arg === "number" && Number.isInteger(arg)) return arg;
  if (typeof arg === "string" && /^[0-9]+$/.test(arg.trim())) return Number(arg.trim());
  if (typeof arg !== "string" || arg.trim() === "") {
    throw new Error(
      `the step of a waiting helper must be a step id or name, not ${JSON.stringify(arg) ?? String(arg)}`,
    );
  }
  const resolved = (rule.structure ?? []).find((r) => r.kind === "step" && r.written === arg && r.key > 0);
  if (resolved) return resolved.key;
  const exact = steps.find((s) => s.name === arg);
  const loose = exact ?? steps.find((s) => typeof s.name === "string" && norm(s.name) === norm(arg));
  if (loose) return loose.id;
  throw new Error(`no step named ${JSON.stringify(arg)} in this instance's workflow`);
}

/**
 * When the step became active (epoch ms), or undefined when it is not active (or the instance is not running).
 * Without a step: the instance's first active step, in position order.
 */
export function waitingSinceMs(rule: CompiledRule, data: InstanceData, arg?: unknown): number | undefined {
  const record = data.record;
  if (!record || data.status !== "running") return undefined;
  const steps = record.process_snapshot?.steps ?? [];
  const active = record.active_step_ids ?? [];
  const pos = (s: SnapshotStep | undefined): number =>
    typeof s?.position === "number" ? s.position : Number.POSITIVE_INFINITY;
  let id: number | undefined;
  if (arg === undefined) {
    const ordered = [...active].sort((a, b) => pos(steps.find((s) => s.id === a)) - pos(steps.find((s) => s.id === b)));
    id = ordered[0];
  } else {
    id = stepIdOf(rule, steps, arg);
  }
  if (id === undefined || !active.includes(id)) return undefined;
  const step = steps.find((s) => s.id === id);
  const at = pos(step);
  let since: number | undefined;
  for (const s of steps) {
    if (s.id === id || !(pos(s) < at)) continue;
    const done = timeOf(s.completed_time);
    if (done !== undefined && (since === undefined || done > since)) since = done;
  }
  return since ?? timeOf(record.started_time);
}

/** The three helpers, bound for one instance (only for rules that call them). */
export function waitingBindings(
  rule: CompiledRule,
  data: InstanceData,
  nowMs: number,
): Record<string, (step?: unknown) => unknown> {
  return {
    waitingSince: (step?: unknown) => {
      const ms = waitingSinceMs(rule, data, step);
      return ms === undefined ? undefined : new Date(ms).toISOString();
    },
    waitingDays: (step?: unknown) => {
      const ms = waitingSinceMs(rule, data, step);
      return ms === undefined ? undefined : (nowMs - ms) / MS_PER_DAY;
    },
    waitingHours: (step?: unknown) => {
      const ms = waitingSinceMs(rule, data, step);
      return ms === undefined ? undefined : (nowMs - ms) / MS_PER_HOUR;
    },
  };
}

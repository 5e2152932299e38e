/**
 * Which selections are evaluated while they are listed, page by page (./stream-group.ts), and with which rules: a
 * listed selection, the selections filtered from it client-side (./query-plan.ts), and every rule over any of them,
 * in one pass over the listing. Pure: decided from the query plan before any request.
 *
 * What stays listed whole, because streaming it would change a request or the plan (docs/performance.md, "Memory"):
 * - a selection a probe or a priority list leans on (a rule's steps learnt from a filtered list, its priority from the
 *   lists priority=V and priority=H): those are matched by id against the whole selection, and the priority choice
 *   is made from the selection's size before any rule is evaluated;
 * - a group where one rule reads records and another reads field values without them: the field values are asked
 *   only once every record of the run is read (a record brings every field), so the two cannot share one pass;
 * - a group whose rules read a field (without records) that a rule of the workflow outside the group reads too: its
 *   form-field pages are asked for all its readers together, in one order;
 * - a group of several rules, or one whose workflow's other field readers it waits for, where one rule plans over
 *   several workflows (its outcomes are kept in one result, in the order of its workflows).
 */
import type { PlannedRule } from "./plan-targets.js";
import { rootOf, type QueryPlan, type Selection } from "./query-plan.js";
import { fieldKey } from "../model/field-values.js";

/** The most fields a streamed group reads: with more, the choice of record reads over field pages could differ. */
export const STREAM_MAX_FIELDS = 250;

export interface StreamGroup {
  /** the listed selection */
  root: string;
  /** the root, then the selections filtered from it, each after its parent */
  selections: Selection[];
  /** the rules over any of them, in the run's order */
  rules: PlannedRule[];
  /** evaluated with the rules that read records (first), or after them with the field values */
  phase: "records" | "fields";
  /**
   * other rules of the workflow read other fields without records: whether the values still unknown at the end are
   * asked by pages or by record reads is decided for the workflow as a whole, with theirs (./plan-fields.ts)
   */
  coupled: boolean;
}

const readsFieldsAlone = (p: PlannedRule, plan: QueryPlan): boolean =>
  p.needs.fields.length > 0 && (!p.needs.record || plan.rules.get(p.key)?.priorityLists !== undefined);

export function streamGroups(planned: readonly PlannedRule[], plan: QueryPlan): StreamGroup[] {
  const families = new Map<string, { selections: Selection[]; rules: PlannedRule[] }>();
  const depth = (s: Selection): number => {
    let d = 0;
    for (let at = s; at.source.kind === "filter" && d < plan.selections.size; d++) {
      const parent = plan.selections.get(at.source.parent);
      if (!parent) break;
      at = parent;
    }
    return d;
  };
  for (const s of plan.selections.values()) {
    const root = rootOf(plan, s.id);
    const f = families.get(root) ?? { selections: [], rules: [] };
    f.selections.push(s);
    families.set(root, f);
  }
  for (const p of planned) {
    const q = plan.rules.get(p.key);
    if (q) families.get(rootOf(plan, q.selection))?.rules.push(p);
  }
  const leaned = new Set<string>();
  for (const q of plan.rules.values()) {
    for (const probe of q.probes) leaned.add(probe.selection);
    if (q.priorityLists) {
      leaned.add(q.selection);
      for (const id of Object.values(q.priorityLists)) leaned.add(id);
    }
  }
  const groups: StreamGroup[] = [];
  for (const [root, f] of families) {
    const rootSel = plan.selections.get(root);
    if (!rootSel || rootSel.source.kind !== "list" || f.rules.length === 0) continue;
    if (f.selections.some((s) => leaned.has(s.id))) continue;
    // every user of every selection is a rule of the group over it (no probe, no priority list)
    const keys = new Set(f.rules.map((p) => p.key));
    const usedBy = (s: Selection): boolean =>
      s.users.every((u) => keys.has(u) && plan.rules.get(u)?.selection === s.id);
    if (!f.selections.every(usedBy)) continue;
    if (f.rules.some((p) => (plan.rules.get(p.key)?.probes.length ?? 0) > 0)) continue;
    const fieldRules = f.rules.filter((p) => !p.needs.record && p.needs.fields.length > 0);
    const records = f.rules.some((p) => p.needs.record);
    if (records && fieldRules.length > 0) continue;
    let coupled = false;
    if (fieldRules.length > 0) {
      const processId = fieldRules[0]?.needs.processId;
      const keysOf = (p: PlannedRule): string[] => p.needs.fields.map((r) => fieldKey(r.step, r.action));
      const fields = new Set(fieldRules.flatMap(keysOf));
      const others = planned.filter(
        (o) => o.needs.processId === processId && readsFieldsAlone(o, plan) && !f.rules.includes(o),
      );
      // a field also read outside the group is asked for all its readers together, in one order
      if (others.some((o) => keysOf(o).some((k) => fields.has(k)))) continue;
      if (new Set([...fields, ...others.flatMap(keysOf)]).size > STREAM_MAX_FIELDS) continue;
      coupled = others.length > 0;
    }
    const shared = f.rules.some((p) => planned.some((o) => o !== p && o.result === p.result));
    if (shared && (f.rules.length > 1 || coupled)) continue;
    groups.push({
      root,
      selections: [...f.selections].sort((a, b) => depth(a) - depth(b)),
      rules: f.rules,
      phase: records ? "records" : "fields",
      coupled,
    });
  }
  return groups;
}

/**
 * A workflow's structure as flowrules knows it: its steps in order and their form fields, read from the
 * process_snapshot of its newest instance (and the fields' `settings` where the service sends them). This is the
 * `describe --format json` document and one entry of the workflow catalog (docs/workflows.md).
 */
import { z } from "zod";

export const StructureActionSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  required: z.boolean().optional(),
  options: z.array(z.string()).optional(),
});
export type StructureAction = z.infer<typeof StructureActionSchema>;

export const StructureStepSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  position: z.number(),
  type: z.string(),
  actions: z.array(StructureActionSchema),
});
export type StructureStep = z.infer<typeof StructureStepSchema>;

export const WorkflowStructureSchema = z.object({
  workflow: z.object({
    id: z.number().int(),
    name: z.string(),
    folder: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  }),
  /** the instance the structure was read from; null when the workflow has no instance yet */
  source: z.object({ instance_id: z.number().int(), started_time: z.string() }).nullable(),
  steps: z.array(StructureStepSchema),
});
export type WorkflowStructure = z.infer<typeof WorkflowStructureSchema>;

/** Field types whose values flowrules can check; any other type accepts any value. */
export const KNOWN_FIELD_TYPES = ["text", "number", "date", "radio", "checklist"] as const;

/** Input objects as the snapshot's shape allows (docs/design.md, "process_snapshot"): `settings.options` may be strings or `{ label|name|value }`. */
function optionText(o: unknown): string | undefined {
  if (typeof o === "string") return o;
  if (typeof o === "number") return String(o);
  if (typeof o === "object" && o !== null) {
    for (const k of ["label", "name", "value", "text"]) {
      const v = (o as Record<string, unknown>)[k];
      if (typeof v === "string") return v;
    }
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The structure from a process_snapshot (shape in docs/design.md, "process_snapshot"; unknown keys ignored, missing ones
 * tolerated). `settings` may come from the snapshot action or from the 4.6 answer (`extraSettings`, by action id).
 */
export function structureFromSnapshot(
  workflow: WorkflowStructure["workflow"],
  source: WorkflowStructure["source"],
  snapshot: unknown,
  extraSettings: ReadonlyMap<number, unknown> = new Map(),
): WorkflowStructure {
  const rawSteps = isRecord(snapshot) && Array.isArray(snapshot.steps) ? snapshot.steps : [];
  const steps: StructureStep[] = [];
  rawSteps.forEach((s: unknown, i) => {
    if (!isRecord(s) || typeof s.id !== "number") return;
    const actions: StructureAction[] = [];
    for (const a of Array.isArray(s.actions) ? s.actions : []) {
      if (!isRecord(a) || typeof a.id !== "number") continue;
      const settings = isRecord(a.settings)
        ? a.settings
        : isRecord(extraSettings.get(a.id))
          ? (extraSettings.get(a.id) as Record<string, unknown>)
          : {};
      const type =
        typeof a.type === "string" && a.type !== ""
          ? a.type
          : typeof settings.type === "string"
            ? settings.type
            : "unknown";
      const name =
        typeof a.name === "string" && a.name !== ""
          ? a.name
          : typeof settings.label === "string"
            ? settings.label
            : `field ${a.id}`;
      const out: StructureAction = { id: a.id, name, type };
      if (typeof settings.required === "boolean") out.required = settings.required;
      const opts = Array.isArray(settings.options)
        ? settings.options.map(optionText).filter((o): o is string => o !== undefined)
        : [];
      if (opts.length > 0) out.options = opts;
      actions.push(out);
    }
    steps.push({
      id: s.id,
      name: typeof s.name === "string" ? s.name : `step ${s.id}`,
      position: typeof s.position === "number" ? s.position : i + 1,
      type: typeof s.type === "string" ? s.type : "unknown",
      actions,
    });
  });
  steps.sort((a, b) => a.position - b.position);
  return { workflow, source, steps };
}

/** An identifier from a field's name for `fields.<alias>` ("Unit price" → unit_price, "1st reviewer" → f_1st_reviewer). */
export function aliasOf(name: string): string {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (base === "") return "field";
  return /^[0-9]/.test(base) ? `f_${base}` : base;
}

/**
 * One alias per form field of a workflow, unique within it: a name used by two fields is told apart by its step
 * ("amount" and "amount_manager_approval").
 */
export function fieldAliases(s: WorkflowStructure): Map<number, string> {
  const out = new Map<number, string>();
  const taken = new Set<string>();
  const count = new Map<string, number>();
  for (const st of s.steps)
    for (const a of st.actions) count.set(aliasOf(a.name), (count.get(aliasOf(a.name)) ?? 0) + 1);
  for (const st of s.steps) {
    for (const a of st.actions) {
      let alias = aliasOf(a.name);
      if ((count.get(alias) ?? 0) > 1) alias = `${alias}_${aliasOf(st.name)}`;
      let n = 2;
      const base = alias;
      while (taken.has(alias)) alias = `${base}_${n++}`;
      taken.add(alias);
      out.set(a.id, alias);
    }
  }
  return out;
}

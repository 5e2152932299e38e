/**
 * How a compiled rule names a step or form field before the workflow catalog (./structure.ts) resolves it. Kept apart
 * from the catalog's zod schemas so that compiling rules does not load zod (docs/performance.md, "Start-up").
 */
import type { CompiledValue, SourcePos } from "../model/rule-types.js";

/**
 * A reference to a step or form field in a compiled rule, as written (an id or a name), with its place in the file.
 * `key` stands for it in the compiled rule until names are resolved: the id itself, or, for a name, a negative
 * number derived from the name (so two rules naming one step still meet in conflict checks).
 */
export interface StructureRef {
  kind: "step" | "field";
  key: number;
  written: number | string;
  pos: SourcePos;
  /** how messages name the place: "fields.amount", "actions[0].complete_step.step", "select.active_step_id" */
  where: string;
  /** for a field: the key of the step it is named with */
  step?: number;
  /** for an action input: the value sent and where it is */
  value?: { value: CompiledValue; pos: SourcePos; where: string };
}

/** FNV-1a, folded into the negative integers: a stable stand-in for a name until it is resolved. */
export function nameKey(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("\u0000")) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return -((h % 2_000_000_000) + 1);
}

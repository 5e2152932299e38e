/**
 * A rule's `priority` learnt from the lists priority=V and priority=H instead of record reads (./plan-live.ts): the
 * ids of the two lists in typed-array sets (src/model/id-set.ts), and one shared answer per priority, not an object
 * and a map entry per selected instance. Asked only for instances of the rule's selection; an instance in neither
 * list is Regular (null), and one the service put in both lists is H, as when the lists were read V first.
 */
import type { KnownRecordKeys } from "../actions/instance.js";

const V: KnownRecordKeys = Object.freeze({ priority: "V" });
const H: KnownRecordKeys = Object.freeze({ priority: "H" });
const REGULAR: KnownRecordKeys = Object.freeze({ priority: null });

export interface KnownKeys {
  get(id: number): KnownRecordKeys | undefined;
}

/** Whether a list holds an instance: an id set of a priority list, shared by the rules over its selection. */
export interface Holds {
  has(id: number): boolean;
}

export class PriorityKnown implements KnownKeys {
  readonly v: Holds[] = [];
  readonly h: Holds[] = [];

  get(id: number): KnownRecordKeys {
    return this.h.some((s) => s.has(id)) ? H : this.v.some((s) => s.has(id)) ? V : REGULAR;
  }
}

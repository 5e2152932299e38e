/**
 * A rule's planned changes, held compactly from the moment an instance's outcome is added until the plan is written
 * (docs/performance.md, "A million instances"). Each change is its JSON text in a byte store outside the heap, which
 * goes to an unnamed temporary file past a threshold (src/fs/spill-bytes.ts); what the assembly orders, limits,
 * judges and names the changes by (instance, rule, kind, step, audit, and the keys of before and after) is kept beside
 * it in typed arrays and tables. A change is made again from its text only when it is read: conflicts read the few
 * instances with several changes, the plan's writer, digest and views read the plan's lazy array (src/plan/lazy-changes.ts).
 */
import { SpillBytes, type SpillOptions } from "../fs/spill-bytes.js";
import { grown } from "../model/number-column.js";
import type { PlannedChange } from "../plan/types.js";
import { nameFact, type NameFact } from "./names.js";
import type { FoldedSearch } from "../text/folded-search.js";

/** What the plan's `names` and a rule's `fields` read of a change beside its rule: its workflow, step and keys. */
export type ChangeShape = Omit<NameFact, "rule">;

const FIRST = 256;

/** The index of `value` in `list`, added when new. */
function intern(value: string, list: string[], index: Map<string, number>): number {
  const known = index.get(value);
  if (known !== undefined) return known;
  list.push(value);
  index.set(value, list.length - 1);
  return list.length - 1;
}

export class ChangeStore {
  private bytes: SpillBytes;
  private n = 0;
  private instances = new Float64Array(0);
  /** NaN: no step */
  private steps = new Float64Array(0);
  private starts = new Float64Array(0);
  private lengths = new Uint32Array(0);
  private shapes = new Uint32Array(0);
  private rules = new Uint16Array(0);
  private kinds = new Uint16Array(0);
  private audits = new Uint8Array(0);
  private readonly ruleNames: string[] = [];
  private readonly ruleIndex = new Map<string, number>();
  private readonly kindNames: string[] = [];
  private readonly kindIndex = new Map<string, number>();
  private readonly shapeList: ChangeShape[] = [];
  private readonly shapeIndex = new Map<string, number>();
  /**
   * each makes the precondition of every change read (what the plan saw of its instance, src/engine/seen.ts); the
   * rest of a change is its text as added, which `mayHold` searches
   */
  private readonly preconditions: Array<(c: PlannedChange) => PlannedChange["precondition"]> = [];

  constructor(private readonly spill: SpillOptions = {}) {
    this.bytes = new SpillBytes(spill);
  }

  get length(): number {
    return this.n;
  }

  add(change: PlannedChange): void {
    const i = this.n;
    if (i >= this.instances.length) {
      const need = i + 1;
      this.instances = grown(this.instances, need, FIRST);
      this.steps = grown(this.steps, need, FIRST);
      this.starts = grown(this.starts, need, FIRST);
      this.lengths = grown(this.lengths, need, FIRST);
      this.shapes = grown(this.shapes, need, FIRST);
      this.rules = grown(this.rules, need, FIRST);
      this.kinds = grown(this.kinds, need, FIRST);
      this.audits = grown(this.audits, need, FIRST);
    }
    const { at, bytes } = this.bytes.appendText(JSON.stringify(change));
    this.starts[i] = at;
    this.lengths[i] = bytes;
    this.instances[i] = change.instance_id;
    this.steps[i] = change.step_id ?? Number.NaN;
    this.rules[i] = intern(change.rule, this.ruleNames, this.ruleIndex);
    this.kinds[i] = intern(change.kind, this.kindNames, this.kindIndex);
    this.audits[i] = change.audit === true ? 1 : 0;
    this.shapes[i] = this.shapeOf(change);
    this.n++;
  }

  /** The `i`th change, made anew from its text. */
  at(i: number): PlannedChange {
    const c = JSON.parse(this.bytes.text(this.starts[i] ?? 0, this.lengths[i] ?? 0)) as PlannedChange;
    // assigned in place: the key keeps its place in the change
    for (const p of this.preconditions) c.precondition = p(c);
    return c;
  }

  instanceAt(i: number): number {
    return this.instances[i] ?? 0;
  }

  ruleAt(i: number): string {
    return this.ruleNames[this.rules[i] ?? 0] ?? "";
  }

  kindAt(i: number): string {
    return this.kindNames[this.kinds[i] ?? 0] ?? "";
  }

  stepAt(i: number): number | undefined {
    const s = this.steps[i] ?? Number.NaN;
    return Number.isNaN(s) ? undefined : s;
  }

  auditAt(i: number): boolean {
    return this.audits[i] === 1;
  }

  /** The index of the `i`th change's shape: changes with equal shapes share it. */
  shapeIdAt(i: number): number {
    return this.shapes[i] ?? 0;
  }

  shape(id: number): ChangeShape {
    return this.shapeList[id] ?? { process_id: 0, keys: [] };
  }

  /** The instances of the changes, in the order added (one per change). */
  instanceIds(): number[] {
    return Array.from(this.instances.subarray(0, this.n));
  }

  /** Every change read from now on has the precondition `fn` makes of it (after those given before). */
  precondition(fn: (c: PlannedChange) => PlannedChange["precondition"]): void {
    this.preconditions.push(fn);
  }

  /**
   * False when no change's text holds `search`'s needle in any case (src/text/folded-search.ts): no string of any
   * change, apart from the precondition, can then hold it. True when one may.
   */
  mayHold(search: FoldedSearch): boolean {
    return !search.inJson || search.bytesHold(this.bytes.pieces());
  }

  /** Forgets every change (a rule whose plan failed). */
  clear(): void {
    this.bytes.close();
    this.bytes = new SpillBytes(this.spill);
    this.n = 0;
  }

  /** Lets go of the bytes now (they also go when the store is collected). */
  close(): void {
    this.bytes.close();
  }

  private shapeOf(c: PlannedChange): number {
    const { rule: _rule, ...shape } = nameFact(c);
    const name = JSON.stringify([shape.process_id, shape.step_id ?? null, shape.keys]);
    const known = this.shapeIndex.get(name);
    if (known !== undefined) return known;
    this.shapeList.push(shape);
    this.shapeIndex.set(name, this.shapeList.length - 1);
    return this.shapeList.length - 1;
  }
}

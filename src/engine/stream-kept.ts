/**
 * The outcomes a streamed rule keeps until its listing ends (./stream-group.ts): those that show in the plan, evaluated
 * out of listing order (a rule reading fields evaluates an instance when its values are in), put in in listing order at
 * the end. A report rule's matched instance is most of them (at 1,000,000 a report of 28,000 rows is kept for the
 * whole of its listing); as an outcome object with its entry, keys and row it costs ~500 bytes. Here such an outcome is
 * its place and its entries, kept as the plan keeps them (src/actions/report-entries.ts). An outcome with changes (a
 * rule that changes what it matched: 37,779 complete_steps at 1,000,000, ~1.4 KB each as objects, ~50 MB of heap held
 * to the end of the listing) is its place and the JSON text of its changes, skipped actions and started time, in bytes
 * outside the heap (src/fs/spill-bytes.ts), as the rule's change store holds changes (./change-store.ts keeps a change
 * as its JSON text too, so the text read back makes the same change). Any other (an error, a change with report
 * entries, a change whose before or after holds an undefined value, which the text would drop from its keys) is kept
 * as itself. `drain` gives every outcome back in the order of its place (places are distinct: the rule's count of
 * instances handed to it), equal to the one kept as a rule's result reads it (`addOutcome`: a started time only counts
 * with changes, so a report outcome's is not kept; test/engine/stream-kept.test.ts).
 */
import { ReportEntries } from "../actions/index.js";
import { SpillBytes } from "../fs/spill-bytes.js";
import { NumberColumn } from "../model/number-column.js";
import type { PlannedChange } from "../plan/types.js";
import type { InstanceOutcome } from "./evaluate-instance.js";

/** What a kept outcome with changes is as text: its started time (or null), changes, skipped actions and reasons. */
type ChangedText = [string | null, PlannedChange[], string[], string[]];

/** Whether a change reads back from its JSON text with the same keys (an undefined value is dropped by the text). */
function readsBackWhole(c: PlannedChange): boolean {
  for (const v of Object.values(c.before)) if (v === undefined) return false;
  for (const v of Object.values(c.after)) if (v === undefined) return false;
  return true;
}

export class KeptOutcomes {
  /**
   * per kept report outcome or outcome with changes: its place in the rule's selection, where its entries start (an
   * outcome with changes has none) and, for one with changes, where its text is (length 0: a report outcome)
   */
  private readonly places = new NumberColumn(new Float64Array(16), 1.5);
  private readonly ids = new NumberColumn(new Float64Array(16), 1.5);
  private readonly firstEntry = new NumberColumn(new Uint32Array(16), 1.5);
  private readonly textAt = new NumberColumn(new Float64Array(16), 1.5);
  private readonly textBytes = new NumberColumn(new Uint32Array(16), 1.5);
  private texts: SpillBytes | undefined;
  /** per entry: its report action, and the entry itself */
  private readonly actions = new NumberColumn(new Uint32Array(16), 1.5);
  private entries = new ReportEntries();
  private others: Array<[number, InstanceOutcome]> = [];

  get size(): number {
    return this.places.length + this.others.length;
  }

  add(place: number, o: InstanceOutcome): void {
    const plain =
      o.matched &&
      o.error === undefined &&
      o.changes.length === 0 &&
      o.skipped.length === 0 &&
      o.skipReasons.length === 0;
    if (!plain) {
      if (o.matched && o.error === undefined && o.reportEntries.length === 0 && o.changes.every(readsBackWhole)) {
        const text: ChangedText = [o.started_time ?? null, o.changes, o.skipped, o.skipReasons];
        const { at, bytes } = (this.texts ??= new SpillBytes()).appendText(JSON.stringify(text));
        this.push(place, o.instance_id, at, bytes);
        return;
      }
      this.others.push([place, o]);
      return;
    }
    this.push(place, o.instance_id, 0, 0);
    for (const { actionIndex, entry } of o.reportEntries) {
      this.actions.push(actionIndex);
      this.entries.add(entry);
    }
  }

  private push(place: number, id: number, at: number, bytes: number): void {
    this.places.push(place);
    this.ids.push(id);
    this.firstEntry.push(this.actions.length);
    this.textAt.push(at);
    this.textBytes.push(bytes);
  }

  /** Every outcome kept, by place (equal places in the order kept); then nothing is kept. */
  drain(put: (o: InstanceOutcome) => void): void {
    const n = this.places.length;
    const order = Uint32Array.from({ length: n }, (_, i) => i).sort(
      (a, b) => this.places.at(a) - this.places.at(b) || a - b,
    );
    const others = this.others.sort((a, b) => a[0] - b[0]);
    let o = 0;
    for (let k = 0; k < n; k++) {
      const i = order[k] as number;
      const place = this.places.at(i);
      while (o < others.length && (others[o] as [number, InstanceOutcome])[0] <= place)
        put((others[o++] as [number, InstanceOutcome])[1]);
      put(this.outcome(i));
    }
    while (o < others.length) put((others[o++] as [number, InstanceOutcome])[1]);
    this.clear();
  }

  clear(): void {
    this.places.clear();
    this.ids.clear();
    this.firstEntry.clear();
    this.textAt.clear();
    this.textBytes.clear();
    this.texts?.close();
    this.texts = undefined;
    this.actions.clear();
    this.entries = new ReportEntries();
    this.others = [];
  }

  private outcome(i: number): InstanceOutcome {
    const bytes = this.textBytes.at(i);
    if (bytes > 0 && this.texts) {
      const [started, changes, skipped, skipReasons] = JSON.parse(
        this.texts.text(this.textAt.at(i), bytes),
      ) as ChangedText;
      return {
        instance_id: this.ids.at(i),
        matched: true,
        changes,
        reportEntries: [],
        skipped,
        skipReasons,
        ...(started !== null ? { started_time: started } : {}),
      };
    }
    const from = this.firstEntry.at(i);
    const to = i + 1 < this.firstEntry.length ? this.firstEntry.at(i + 1) : this.actions.length;
    const reportEntries: InstanceOutcome["reportEntries"] = [];
    for (let e = from; e < to; e++)
      reportEntries.push({ actionIndex: this.actions.at(e), entry: this.entries.entryAt(e) });
    return {
      instance_id: this.ids.at(i),
      matched: true,
      changes: [],
      reportEntries,
      skipped: [],
      skipReasons: [],
    };
  }
}

/**
 * Between a partial plan's passes (./held.ts, docs/operating.md "A partial plan"): the instances whose data the rules
 * read is not all held, left out of the next pass's listings.
 */
import type { HeldClient } from "./held.js";

/**
 * The instances to leave out for the next pass: of each listing answered, those whose data the rules it answers read
 * (`reads`, by question: records with the options the rules of its workflow asked them with, these fields' values) is
 * not held. An instance only other rules list is not left out for that.
 */
export async function lacking(
  client: HeldClient,
  need: Map<string, Set<number>>,
  reads: ReadonlyMap<string, { record: boolean; fields: ReadonlySet<string> }>,
): Promise<void> {
  const { asked } = client;
  for (const [key, s] of client.served) {
    const r = reads.get(key);
    if (!r || s.query.ordering !== undefined) continue;
    let drop = need.get(key);
    if (!drop) need.set(key, (drop = new Set()));
    const pid = s.processId;
    // field values may come from records read with values: their options then count for a rule reading fields
    const flags = [...(asked.records.get(pid) ?? [])].filter((f) => r.record || (r.fields.size > 0 && f.includes("v")));
    const fields = [...(asked.fields.get(pid) ?? [])].filter((f) => r.fields.has(f));
    for (const { id } of (await client.elements(s)) ?? []) {
      let held = true;
      for (const f of flags) held &&= client.heldRecord(id, f) !== undefined;
      for (const f of fields) held &&= client.heldValue(pid, f, id) !== undefined;
      if (!held) drop.add(id);
    }
  }
}

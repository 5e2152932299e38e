/**
 * A listing held in typed arrays (src/engine/item-table.ts) gives back, element for element and key for key, the
 * elements put in: over many random listings with names in any script (empty, "—", emoji), URLs absent, null or
 * present, and the three statuses.
 */
import { describe, expect, it } from "vitest";
import { ItemTable } from "../../src/engine/item-table.js";
import { PriorityKnown } from "../../src/engine/priority-known.js";
import { IdSet } from "../../src/model/id-set.js";
import { Prng } from "../../src/sandbox/prng.js";
import { withSmallMappedBuffers } from "../helpers/mapped-sizes.js";
import type { InstanceListItem } from "../../src/api/index.js";

const PIECES = ["Expense claim #", "—", " Lena Tanaka", "é", "日本", "😀", "", "a", " ", "\u0000", "Ω"];

const piece = (rnd: Prng): string => Array.from({ length: rnd.int(0, 3) }, () => rnd.pick(PIECES)).join("");

function randomItem(rnd: Prng, id: number): InstanceListItem {
  // names with the element's id in them (once, twice, at the start), as services name instances, and without
  const name = rnd.chance(0.5)
    ? `${piece(rnd)}${rnd.chance(0.2) ? "" : "#"}${id}${rnd.chance(0.2) ? String(id) : ""}${piece(rnd)}`
    : Array.from({ length: rnd.int(0, 6) }, () => rnd.pick(PIECES)).join("");
  const item: InstanceListItem = { id, name, status: rnd.pick(["running", "completed", "aborted"] as const) };
  const url = rnd.pick(["absent", "null", "text", "empty"]);
  if (url === "null") item.public_url = null;
  else if (url === "text")
    item.public_url = rnd.pick([
      `https://svc.example/track/${rnd.int(0, 1e9).toString(36)}—${id}`,
      `https://svc.example/track/${rnd.int(0, 9)}/`,
      `${rnd.int(0, 1e9).toString(36)}`,
      `/${id}`,
    ]);
  else if (url === "empty") item.public_url = "";
  return item;
}

/** A random listing put in a table and read back, before and after it is sealed. */
function sameElements(seed: number): void {
  const rnd = new Prng(seed);
  const n = rnd.int(0, 3000);
  const items = Array.from({ length: n }, (_, i) => randomItem(rnd, rnd.chance(0.5) ? i + 1 : rnd.int(1, 2 ** 52)));
  const table = new ItemTable();
  for (const item of items) table.push(item);
  // part of the assertions before sealing, part after: both states answer alike
  expect(table.length).toBe(n);
  expect(table.slice(0, 7)).toEqual(items.slice(0, 7));
  table.sealed();
  expect([...table]).toEqual(items);
  expect(table.ids()).toEqual(items.map((i) => i.id));
  const a = rnd.int(0, n);
  const b = rnd.int(0, n + 5);
  expect(table.slice(a, b)).toEqual(items.slice(a, b));
  for (let k = 0; k < 20 && n > 0; k++) {
    const at = rnd.int(0, n - 1);
    expect(table.at(at)).toEqual(items[at]);
    expect(table.id(at)).toBe(items[at]?.id);
  }
  const keep = (i: InstanceListItem): boolean => i.status !== "completed" && i.name.length % 2 === 0;
  expect([...table.where(keep)]).toEqual(items.filter(keep));
  // a key absent stays absent (a plan compares elements key for key)
  for (const [at, item] of items.entries())
    if (!("public_url" in item)) expect("public_url" in table.at(at)).toBe(false);
}

describe("ItemTable holds a listing as its elements", () => {
  it.each(Array.from({ length: 30 }, (_, i) => i + 1))("seed %i: the same elements back", (seed) => sameElements(seed));

  // columns that grow and are sealed across the edges of their mapped buffers (test/helpers/mapped-sizes.ts)
  it.each(Array.from({ length: 12 }, (_, i) => i + 31))(
    "seed %i, small mapped buffers: the same elements back",
    (seed) => withSmallMappedBuffers(seed, () => sameElements(seed)),
  );
});

describe("ItemTable keeps the parts many elements share once", () => {
  it("names and URLs of a service's listing, and more distinct parts than its dictionary holds", () => {
    const rnd = new Prng(46);
    const items: InstanceListItem[] = [];
    for (let i = 0; i < 3000; i++) {
      const id = 100_000 + i;
      // the first 1,500 alike (as a service names and links them), then each with a part of its own
      const shared = i < 1500;
      items.push({
        id,
        name: shared ? `Expense claim #${id} — ${rnd.pick(["Lena Tanaka", "Jo Okafor"])}` : `p${i} ${id}`,
        status: "running",
        public_url: shared ? `https://svc.example/track/${id.toString(36)}x` : `https://p${i}.example/${id}`,
      });
    }
    const table = new ItemTable();
    for (const item of items) table.push(item);
    table.sealed();
    expect([...table]).toEqual(items);
    expect(table.at(1499)).toEqual(items[1499]);
    expect(table.at(2999)).toEqual(items[2999]);
  });
});

describe("PriorityKnown answers as the map of priorities it replaces", () => {
  it.each(Array.from({ length: 10 }, (_, i) => i + 1))("seed %i", (seed) => {
    const rnd = new Prng(seed * 31);
    const base = Array.from({ length: rnd.int(0, 2000) }, () => rnd.int(1, 5000));
    const v = base.filter(() => rnd.chance(0.2)).concat([rnd.int(1, 9000)]);
    const h = base.filter(() => rnd.chance(0.2)).concat(v.filter(() => rnd.chance(0.1)));
    // the map as it was built: every base id Regular, then V's, then H's (a later list wins)
    const map = new Map<number, { priority: string | null }>(base.map((id) => [id, { priority: null }]));
    for (const [value, ids] of [
      ["V", v],
      ["H", h],
    ] as const)
      for (const id of ids) if (map.has(id)) map.set(id, { priority: value });
    const known = new PriorityKnown();
    // each list's ids in one or two sets (two rules' lists over one selection)
    for (const [ids, into] of [
      [v, known.v],
      [h, known.h],
    ] as const) {
      const sets = [new IdSet(), new IdSet()];
      for (const id of ids) sets[rnd.int(0, 1)]?.add(id);
      into.push(...sets);
    }
    for (const id of base) expect(known.get(id)).toEqual(map.get(id));
  });
});

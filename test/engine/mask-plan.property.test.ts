/**
 * The API key's mask skips the changes and report rows that cannot hold the key, told by searching the bytes they are
 * made from (src/text/folded-search.ts) instead of making and scanning each. The shortcut is never the truth: over
 * many random plans with the key (in any case) in an instance name, a field's value before a change, a report's
 * column, an object value, an instant, a workflow's step name — or nowhere — the masked plan is byte for byte the
 * plan masked value by value (its changes and rows as plain objects), and the key shows nowhere in it.
 */
import { describe, expect, it } from "vitest";
import { planFromInstances, type PureRuleInput } from "../../src/engine/plan-offline.js";
import { maskKeyInPlan } from "../../src/engine/mask-plan.js";
import type { NameSource } from "../../src/engine/names.js";
import { compileSources } from "../../src/rules/index.js";
import { Prng } from "../../src/sandbox/prng.js";
import { planFileText } from "../../src/plan/write.js";
import { itemsMayHold } from "../../src/plan/lazy-rows.js";
import { changeCounts, countsKnown } from "../../src/plan/change-counts.js";
import type { Plan } from "../../src/plan/types.js";
import { FoldedSearch } from "../../src/text/folded-search.js";
import { replaceFolded } from "../../src/api/errors.js";
import { instance } from "../helpers/instances.js";

const NOW = new Date("2026-11-01T09:30:00.000Z");

const RULES = `version: 1
rules:
  - name: note-fix
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, note: { step: 20111, action: 50230 } }
    select: { status: [running] }
    when: fields.amount < 100
    actions:
      - save_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "checked" } } ] }
  - name: overdue
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, note: { step: 20111, action: 50230 } }
    select: { status: [running] }
    actions: [ { report: { group_by: priority, columns: [id, name, deadline, fields.note, fields.amount] } } ]
`;

/**
 * Keys of every sort: plain, without a digit, mixed case, short, one JSON escapes, one beyond ASCII, one of an
 * instant's characters.
 */
const KEYS = ["Tenant42-AbCdEf", "SecretKeyAlpha", "sk_live_ABCD1234", "k3Y!", 'ab"Cd-9', "clé-Ünï-42", "T12:00"];

const WHERE = ["name", "before", "report", "object", "instant", "step-name"] as const;
type Where = (typeof WHERE)[number];

/** The key in a random case of its ASCII letters (the mask finds it in any: src/api/errors.ts, replaceFolded). */
function anyCase(rnd: Prng, key: string): string {
  return key.replace(/[a-z]/gi, (c) => (rnd.chance(0.5) ? c.toUpperCase() : c.toLowerCase()));
}

/** A-Z as a-z, the rest as it is. */
function fold(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function randomCase(rnd: Prng): {
  key: string;
  inputs: PureRuleInput[];
  names: Map<number, NameSource[]>;
  at: Set<Where>;
} {
  const compiled = compileSources([{ file: "rules.yaml", text: RULES }]);
  if (!compiled.ruleSet) throw new Error(compiled.diagnostics.map((d) => d.message).join("\n"));
  const key = rnd.pick(KEYS);
  const at = new Set<Where>(rnd.chance(0.3) ? [] : WHERE.filter(() => rnd.chance(0.35)));
  // where the key is placed: on the first instance for sure, on others by chance
  // after the text or before it: a report keeps a text's part before its first digit apart (src/model/value-column.ts),
  // so a key before a number spans that part and the rest
  const put = (where: Where, k: number, plain: string): string =>
    at.has(where) && (k === 0 || rnd.chance(0.3))
      ? rnd.chance(0.5)
        ? `${plain} ${anyCase(rnd, key)}`
        : `${anyCase(rnd, key)} ${plain}`
      : plain;
  const count = rnd.int(1, 40);
  const instances = Array.from({ length: count }, (_, k) => {
    const id = 1000 + k;
    // an object value is kept as itself by a report (src/model/value-column.ts): searched value by value
    const note =
      at.has("object") && (k === 0 || rnd.chance(0.3))
        ? { text: anyCase(rnd, key), [anyCase(rnd, key)]: 1 }
        : put("before", k, put("report", k, `note ${k}`));
    const data = instance({
      id,
      values: { "20111:50222": { inputValue: rnd.int(0, 150) }, "20111:50230": { inputValue: note } },
      // an instant is held as its time and given back as its text: a key of its characters is in it
      record: {
        deadline:
          at.has("instant") && (k === 0 || rnd.chance(0.5)) ? "2026-10-01T12:00:00.000Z" : "2026-10-01T08:15:00.000Z",
        priority: rnd.pick(["high", "low"]),
      } as never,
    });
    return { ...data, name: put("name", k, `Claim ${id}`) };
  });
  const names = new Map<number, NameSource[]>([
    [
      1042,
      [
        {
          name: "Expense claim",
          steps: new Map([[20111, at.has("step-name") ? `Approval ${anyCase(rnd, key)}` : "Approval"]]),
          fields: new Map([[50230, "Note"]]),
        },
      ],
    ],
  ]);
  const inputs = compiled.ruleSet.rules.map((rule) => ({ rule, workflowId: 1042, instances }));
  return { key, inputs, names, at };
}

/** The same plan with its changes and rows as plain objects: the mask then looks at every value. */
function plainCopy(plan: Plan): Plan {
  return JSON.parse(JSON.stringify(plan)) as Plan;
}

describe("the key's mask skips what cannot hold the key", () => {
  const seeds = Array.from({ length: 200 }, (_, i) => i + 1);
  it.each(seeds)("seed %i: the plan masked value by value, byte for byte, and no key left", async (seed) => {
    const rnd = new Prng(seed);
    const { key, inputs, names, at } = randomCase(rnd);
    const threshold = rnd.pick([0, 1, 700, 1e9]);
    const plan = await planFromInstances(inputs, NOW, { names, spill: { threshold } });
    const before = planFileText(plan);
    const plain = plainCopy(plan);
    const changes = plan.changes;
    const hits = maskKeyInPlan(plan, key);
    expect(hits).toBe(maskKeyInPlan(plain, key));
    const text = planFileText(plan);
    expect(text).toBe(planFileText(plain));
    // nothing planned copies a value into a request or `after` here: the key is nowhere, in any case
    expect(fold(text)).not.toContain(fold(key));
    expect(fold(text)).not.toContain(fold(JSON.stringify(key).slice(1, -1)));
    // the counts stay the planner's (the masked changes keep their rule, kind and audit)
    expect(countsKnown(plan.changes)).toBeDefined();
    expect(changeCounts(plan.changes).total).toBe(plan.changes.length);
    if (at.size === 0) {
      expect(hits).toBe(0);
      expect(text).toBe(before);
      // the shortcut was taken: the changes are the planner's own, unwrapped
      if (new FoldedSearch(key).inJson) expect(plan.changes).toBe(changes);
    }
  });

  it("the random plans do what they are for: the key in each place, and plans without it", async () => {
    const seen = new Map<string, number>();
    for (const seed of seeds) {
      const rnd = new Prng(seed);
      const { key, inputs, names, at } = randomCase(rnd);
      const plan = await planFromInstances(inputs, NOW, { names });
      const search = new FoldedSearch(key);
      const bump = (what: string): void => void seen.set(what, (seen.get(what) ?? 0) + 1);
      if (at.size === 0) bump("none");
      if (itemsMayHold(plan.changes, search) && search.inJson) bump("changes hold it");
      if (plan.reports.some((r) => itemsMayHold(r.rows, search)) && search.inJson) bump("rows hold it");
      if (maskKeyInPlan(plan, key) > 0) bump("masked");
      if (!search.inJson) bump("escaped in JSON");
    }
    for (const what of ["none", "changes hold it", "rows hold it", "masked", "escaped in JSON"])
      expect(seen.get(what) ?? 0, what).toBeGreaterThan(5);
  });
});

describe("a folded search over bytes", () => {
  it("finds what replaceFolded replaces, across pieces, and nothing else", () => {
    const rnd = new Prng(7);
    const alphabet = ["a", "B", "k", "K", "3", "-", "é", "Ü", '"', "\\", "\n", "😀", " "];
    for (let round = 0; round < 3000; round++) {
      const needle = Array.from({ length: rnd.int(1, 5) }, () => rnd.pick(alphabet)).join("");
      const text = Array.from({ length: rnd.int(0, 30) }, () => rnd.pick(alphabet)).join("");
      const search = new FoldedSearch(needle);
      const masked = replaceFolded(text, needle, "\u0000") !== text;
      expect(search.textHolds(text), `${needle} in ${text}`).toBe(masked);
      // the text's own bytes, cut anywhere
      const bytes = Buffer.from(text, "utf8");
      const cuts = [0, ...Array.from({ length: rnd.int(0, 4) }, () => rnd.int(0, bytes.length)), bytes.length].sort(
        (a, b) => a - b,
      );
      const pieces = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
      expect(search.bytesHold(pieces), `${needle} in ${text}`).toBe(masked);
      // in JSON: never missed when the needle is searchable there
      if (search.inJson && masked) expect(search.bytesHold([Buffer.from(JSON.stringify({ [text]: text }))])).toBe(true);
    }
  });
});

/** `selected` / `matched`: exactly these instances, per rule; each difference names the instance and says why. */
import type { RuleExplanation } from "../engine/explain/index.js";
import type { Expect } from "./schema.js";
import { instanceFailure, type Locate, type Observed } from "./observed.js";
import type { Failure } from "./types.js";
import { whyLines } from "./why.js";

type IdsByRule = NonNullable<Expect["matched"]>;

/** Normalises `[1, 2]` (one rule) and `{ rule: [1, 2] }` (several) to rule → ids; problems are test-file errors. */
export function idsByRule(
  expected: IdsByRule,
  obs: Observed,
  where: string,
  locate: Locate,
): { byRule: Map<string, number[]>; problems: Failure[] } {
  const byRule = new Map<string, number[]>();
  const problems: Failure[] = [];
  const names = obs.rules.map((r) => r.name);
  if (Array.isArray(expected)) {
    if (names.length === 1 && names[0] !== undefined) byRule.set(names[0], expected);
    else
      problems.push({
        subject: where,
        at: locate([where]),
        expected: `${where}: { <rule>: [ids] }`,
        actual: `a list, but the case tests ${names.length} rules (${names.join(", ")})`,
      });
    return { byRule, problems };
  }
  for (const [rule, ids] of Object.entries(expected)) {
    if (names.includes(rule)) byRule.set(rule, ids);
    else
      problems.push({
        subject: `${where}.${rule}`,
        at: locate([where, rule]),
        expected: `one of the rules under test: ${names.join(", ")}`,
        actual: `"${rule}"`,
      });
  }
  return { byRule, problems };
}

export function compareIds(
  which: "selected" | "matched",
  expected: IdsByRule,
  obs: Observed,
  locate: Locate,
): Failure[] {
  const { byRule, problems } = idsByRule(expected, obs, which, locate);
  const out: Failure[] = [...problems];
  for (const [rule, ids] of byRule) {
    const explained = obs.explanations.get(rule) ?? new Map<number, RuleExplanation>();
    const want = new Set(ids);
    const actual = new Set<number>();
    for (const [id, e] of explained) if (which === "matched" ? e.matched : e.selected !== "fail") actual.add(id);
    const prefix = obs.rules.length > 1 ? `rule ${rule}: ` : "";
    for (const id of [...new Set([...want, ...actual])].sort((a, b) => a - b)) {
      const inWant = want.has(id);
      if (inWant === actual.has(id)) continue;
      const e = explained.get(id);
      if (!e && !obs.names.has(id)) {
        out.push({
          subject: `${prefix}${which} instance ${id}`,
          at: locate([which]),
          expected: `a fixture with id ${id}`,
          actual: "no such fixture",
        });
        continue;
      }
      const why = e ? whyLines(e) : [`instance is not in the workflow of rule "${rule}"`];
      if (which === "selected" && e) {
        const unknown = e.filters.filter((f) => f.result === "unknown");
        for (const f of unknown)
          why.push([`select ${f.key} = `, { written: f.value }, " cannot be checked on a fixture: assumed to hold"]);
      }
      out.push(
        instanceFailure(obs, id, {
          subject: `${prefix}${which}`,
          expected: inWant ? `${which}` : `not ${which}`,
          actual: inWant ? `not ${which}` : `${which}`,
          why,
        }),
      );
    }
  }
  return out;
}

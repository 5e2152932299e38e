/** `needs`: which aliases and whether the full record must be read, found statically. */
import { describe, expect, it } from "vitest";
import type { RuleNeeds } from "../../src/rules/types.js";
import { loadText, ruleFile } from "./helpers.js";

const FIELDS = `fields:
  amount: { step: 20111, action: 50222 }
  currency: { step: 20111, action: 50223 }
  notes: { step: 20111, action: 50230 }`;

function needsOf(body: string): RuleNeeds {
  const r = loadText(ruleFile(`workflow: 1042\n${FIELDS}\n${body}`));
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.ruleSet!.rules[0]!.needs;
}

const abort = "actions: [abort]";

describe("needs analysis", () => {
  it.each<[string, string, RuleNeeds]>([
    ["no when", abort, { fields: [], record: false }],
    ["fields read in when, in declaration order", `when: fields.currency = "EUR" and fields.amount < 3\n${abort}`, { fields: ["amount", "currency"], record: false }],
    ["list-element keys of instance", `when: instance.status = "running" and instance.id > 3 and instance.name != "" and $exists(instance.public_url)\n${abort}`, { fields: [], record: false }],
    ["a record key of instance", `when: instance.priority = "H"\n${abort}`, { fields: [], record: true }],
    ["helper on a record timestamp", `when: $daysSince(instance.last_updated_time) > 90\n${abort}`, { fields: [], record: true }],
    ["instance as a whole", `when: $count($keys(instance)) > 0\n${abort}`, { fields: [], record: true }],
    ["tags", `when: '"vip" in tags'\n${abort}`, { fields: [], record: true }],
    ["snapshot", `when: $count(snapshot.steps) > 2\n${abort}`, { fields: [], record: true }],
    ["now only", `when: now > "2024"\n${abort}`, { fields: [], record: false }],
    ["fields as a whole", `when: $count($keys(fields)) > 1\n${abort}`, { fields: ["amount", "currency", "notes"], record: false }],
    ["fields wildcard", `when: fields.* = 3\n${abort}`, { fields: ["amount", "currency", "notes"], record: false }],
    ["the whole context", `when: $count($keys($)) > 0\n${abort}`, { fields: ["amount", "currency", "notes"], record: true }],
    ["descendants", `when: "**.amount > 1"\n${abort}`, { fields: ["amount", "currency", "notes"], record: true }],
    ["$$ inside a predicate reads the context", `when: $count(instance.active_step_ids[$ = $$.fields.amount]) > 0\n${abort}`, { fields: ["amount"], record: true }],
    ["a predicate's own keys are not context reads", `when: fields.notes[$contains($, "x")] and instance.status = "running"\n${abort}`, { fields: ["notes"], record: false }],
    ["lambda bodies", `when: $count($filter([1,2], function($v){ $v < fields.amount })) > 0\n${abort}`, { fields: ["amount"], record: false }],
    ["bound variables", `when: ($a := fields.amount; $a < 3)\n${abort}`, { fields: ["amount"], record: false }],
    [
      "templates in inputs",
      `actions:\n  - save_step:\n      step: 20111\n      inputs:\n        - action: 50230\n          value: { inputValue: "{{ fields.notes }} / {{ instance.stage }}" }`,
      { fields: ["notes"], record: true },
    ],
    ["report on list-element keys and aliases", `actions:\n  - report: { group_by: status, columns: [id, name, public_url, fields.amount, currency] }`, { fields: ["amount", "currency"], record: false }],
    ["report grouped by tags", `actions:\n  - report: { group_by: tags }`, { fields: [], record: true }],
    ["report with a record column", `actions:\n  - report: { group_by: amount, columns: [id, deadline] }`, { fields: ["amount"], record: true }],
  ])("%s", (_name, body, expected) => {
    expect(needsOf(body)).toEqual(expected);
  });
});

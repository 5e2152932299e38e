/**
 * Hostile JSONata: runaway recursion and endless loops in `when` and in templates are cut off with a clear error for
 * that instance, leaving the rest of the plan alone; regular expressions that could backtrack without end are refused
 * at validation, and the ones allowed run in linear time on adversarial values (a test that hangs fails by timeout).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { compileSources } from "../../src/rules/index.js";
import type { CompiledRule } from "../../src/rules/types.js";
import { instance } from "../helpers/instances.js";
import { expectLocated } from "./helpers.js";

const NOW = new Date("2026-06-15T12:00:00Z");
const FILE = "jsonata.yaml";

function compile(text: string): CompiledRule[] {
  const r = compileSources([{ file: FILE, text }]);
  expectLocated(r, text, FILE);
  if (!r.ruleSet) throw new Error(r.diagnostics.map((d) => d.message).join("\n"));
  return r.ruleSet.rules;
}

/** `runaway` aborts with a runaway `when` (or a runaway template in a step input); `healthy` aborts every instance. */
function rules(expr: string, inTemplate: boolean): string {
  const runaway = inTemplate
    ? [
        "  - name: runaway",
        "    workflow: 1042",
        "    select: { active_step_id: 20111 }",
        "    actions:",
        `      - save_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: ${JSON.stringify(`{{ ${expr} }}`)} } }] }`,
      ]
    : ["  - name: runaway", "    workflow: 1042", `    when: ${JSON.stringify(expr)}`, "    actions: [abort]"];
  return [
    "version: 1",
    "rules:",
    ...runaway,
    "  - name: healthy",
    "    workflow: 1043",
    "    actions: [abort]",
    "",
  ].join("\n");
}

const RUNAWAYS = [
  "($f := function($n) { $f($n + 1) }; $f(0))",
  "($f := function($n) { $n > 0 ? $f($n) : 0 }; $f(1))",
  "($f := function($n) { $f($n) + $f($n) }; $f(1))",
  "$reduce([1..10000000], function($a, $b) { $a + $b })",
  "$count([1..4000].([1..4000].($ * 2)))",
  "($loop := function($x) { $loop($append($x, $x)) }; $loop([1]))",
];

describe("hostile JSONata", () => {
  it("runaway recursion and loops, in when and in templates, are cut off per instance with a clear error", async () => {
    // one pass over each runaway, placed in `when` or in a template as fast-check draws (each costs up to 1 s)
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(RUNAWAYS, { minLength: RUNAWAYS.length, maxLength: RUNAWAYS.length }),
        fc.array(fc.boolean(), { minLength: RUNAWAYS.length, maxLength: RUNAWAYS.length }),
        async (exprs, placing) => {
          for (const [i, expr] of exprs.entries()) {
            const [runaway, healthy] = compile(rules(expr, placing[i] === true));
            const plan = await planFromInstances(
              [
                {
                  rule: runaway as CompiledRule,
                  workflowId: 1042,
                  instances: [instance({ id: 11, record: { active_step_ids: [20111] } })],
                },
                {
                  rule: healthy as CompiledRule,
                  workflowId: 1043,
                  instances: [instance({ id: 12, process_id: 1043 })],
                },
              ],
              NOW,
            );
            expect(plan.errors, expr).toHaveLength(1);
            const [error] = plan.errors;
            expect(error).toMatchObject({ code: "evaluation", rule: "runaway", instance_id: 11 });
            expect(error?.message, expr).toMatch(
              /deeper than 500 levels|longer than 1000 ms|must not exceed|Maximum call stack|larger than an array or text may hold/,
            );
            expect(error?.message.length).toBeLessThan(2000);
            // the other rule is planned as usual
            expect(plan.changes.map((c) => `${c.rule}:${c.instance_id}`)).toEqual(["healthy:12"]);
          }
        },
      ),
      { numRuns: 1 },
    );
  }, 60_000);

  it("a catastrophic regex in a rule runs in linear time on adversarial instance data", async () => {
    const [rule] = compile(
      [
        "version: 1",
        "rules:",
        "  - name: redos",
        "    workflow: 1042",
        '    when: "$contains(instance.name, /(a+)+$/) or $contains(instance.name, /^(\\\\w+\\\\s?)*$/)"',
        "    actions: [abort]",
        "",
      ].join("\n"),
    );
    const evil = [`${"a".repeat(5000)}!`, `${"word ".repeat(2000)}!`, "a".repeat(100_000)];
    const plan = await planFromInstances(
      [
        {
          rule: rule as CompiledRule,
          workflowId: 1042,
          instances: evil.map((name, i) => ({ ...instance({ id: i + 1 }), name })),
        },
      ],
      NOW,
    );
    expect(plan.errors).toEqual([]);
    // the third name ends in "a": matched, and aborted
    expect(plan.changes.map((c) => c.instance_id)).toEqual([3]);
  }, 20_000);

  it("regexes that V8 cannot run in linear time are refused at validation when they repeat", () => {
    const verdict = (re: string): string | undefined => {
      const text = [
        "version: 1",
        "rules:",
        "  - name: r",
        "    workflow: 1042",
        `    when: ${JSON.stringify(`$contains(instance.name, ${re})`)}`,
        "    actions: [abort]",
        "",
      ].join("\n");
      const r = compileSources([{ file: FILE, text }]);
      expectLocated(r, text, FILE);
      return r.diagnostics.find((d) => d.code === "regex")?.message;
    };
    expect(verdict("/(a+)+$/i")).toMatch(/could hang on some values: the i flag/);
    expect(verdict("/(a|aa)*$/i")).toMatch(/could hang/);
    expect(verdict("/^(\\w+)\\s\\1+$/")).toMatch(/backreference or lookaround/);
    expect(verdict("/^(?=.*a)(b+)+$/")).toMatch(/backreference or lookaround/);
    // linear-capable patterns (the fallback engine takes over) and non-repeating ones are fine
    expect(verdict("/(a+)+$/")).toBeUndefined();
    expect(verdict("/urgent|asap/i")).toBeUndefined();
    expect(verdict("/^[A-Z]{3}-\\d+$/")).toBeUndefined();
  });

  it("any regex built from backtracking-prone pieces is refused or finishes on adversarial values", async () => {
    const piece = fc.constantFrom(
      "a",
      "a+",
      "a*",
      "(a+)+",
      "(a|a)*",
      "(a|aa)+",
      "\\w+",
      "\\s*",
      "(\\w+\\s?)*",
      "[ab]+",
      ".*",
      "(?=a)",
      "\\1",
      "(a{1,30}){1,30}",
      "b?",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 1, maxLength: 5 }),
        fc.constantFrom("", "i", "m"),
        fc.boolean(),
        async (pieces, flags, anchored) => {
          const source = `${pieces.join("")}${anchored ? "$" : ""}`;
          try {
            new RegExp(source, flags);
          } catch {
            return; // not a regex at all (e.g. \1 without a group): JSONata reports it like any syntax error
          }
          const text = [
            "version: 1",
            "rules:",
            "  - name: p",
            "    workflow: 1042",
            `    when: ${JSON.stringify(`$contains(instance.name, /${source}/${flags})`)}`,
            "    actions: [abort]",
            "",
          ].join("\n");
          const r = compileSources([{ file: FILE, text }]);
          expectLocated(r, text, FILE);
          const rule = r.ruleSet?.rules[0];
          if (!rule) return;
          const names = [`${"a".repeat(40)}!`, `${"ab".repeat(3000)}c`, `${"a ".repeat(3000)}!`];
          const plan = await planFromInstances(
            [{ rule, workflowId: 1042, instances: names.map((name, i) => ({ ...instance({ id: i + 1 }), name })) }],
            NOW,
          );
          expect(plan.changes.length + plan.errors.length).toBeLessThanOrEqual(names.length);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});

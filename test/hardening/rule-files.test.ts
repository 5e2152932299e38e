/**
 * Hostile rule files: random YAML, deep nesting, huge strings, alias bombs ("billion laughs"), duplicate keys and
 * oversized collections. The loader's answer is always a valid rule set or located errors — never a crash, an internal
 * error, a message quoting megabytes, or a hang (each case runs under the test's timeout).
 */
import fc from "fast-check";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { withDigest } from "../../src/plan/digest.js";
import { compileSources } from "../../src/rules/index.js";
import { MAX_COLLECTION_ENTRIES, MAX_RULE_FILE_CHARS } from "../../src/rules/parse.js";
import { instance } from "../helpers/instances.js";
import { expectLocated } from "./helpers.js";

const FILE = "hostile.yaml";
const RUNS = Number(process.env.FLOWRULES_FC_RUNS ?? 150);
const NOW = new Date("2026-06-15T12:00:00Z");

const load = (text: string) => compileSources([{ file: FILE, text }]);

/** A valid rule whose parts the properties replace: complete step 20111 of expense claims. */
function ruleText(
  parts: { description?: string; when?: string; value?: string; select?: string; extra?: string } = {},
): string {
  return [
    "version: 1",
    "rules:",
    "  - name: hostile",
    `    description: ${parts.description ?? "a rule"}`,
    "    workflow: 1042",
    `    select: ${parts.select ?? "{ status: [running], active_step_id: 20111 }"}`,
    ...(parts.when !== undefined ? [`    when: ${parts.when}`] : []),
    "    actions:",
    "      - complete_step:",
    "          step: 20111",
    "          inputs:",
    `            - { action: 50230, value: ${parts.value ?? "{ inputValue: ok }"} }`,
    ...(parts.extra !== undefined ? [parts.extra] : []),
    "",
  ].join("\n");
}

/** When the set is valid, planning it (JSONata, templates, the digest) must not throw either. */
async function planIfValid(text: string): Promise<void> {
  const r = load(text);
  expectLocated(r, text, FILE);
  const rule = r.ruleSet?.rules[0];
  if (!rule) return;
  const inst = instance({ id: 7, record: { active_step_ids: [20111] } });
  const plan = await planFromInstances([{ rule, workflowId: 1042, instances: [inst] }], NOW);
  expect(JSON.parse(JSON.stringify(withDigest(plan))).digest).toMatch(/^sha256:/);
}

describe("hostile rule files", () => {
  it("random YAML in any place of a rule file: a valid set or located errors", () => {
    const yamlOf = fc
      .tuple(fc.jsonValue({ maxDepth: 4 }), fc.boolean())
      .map(([v, flow]) => stringify(v, flow ? { collectionStyle: "flow" } : {}).trimEnd());
    const place = fc.constantFrom("whole", "rules", "rule", "select", "description", "value", "actions", "version");
    fc.assert(
      fc.property(yamlOf, place, (y, where) => {
        const indented = (n: number): string =>
          `\n${y
            .split("\n")
            .map((l) => " ".repeat(n) + l)
            .join("\n")}`;
        let text: string;
        switch (where) {
          case "whole":
            text = y;
            break;
          case "rules":
            text = `version: 1\nrules:${indented(2)}\n`;
            break;
          case "rule":
            text = `version: 1\nrules:\n  -${indented(4)}\n`;
            break;
          case "version":
            text = `version:${indented(2)}\nrules: []\n`;
            break;
          case "select":
            text = ruleText({ select: indented(6) });
            break;
          case "description":
            text = ruleText({ description: indented(6) });
            break;
          case "value":
            text = ruleText({ value: JSON.stringify(JSON.parse(JSON.stringify(y))) });
            break;
          default:
            text = `version: 1\nrules:\n  - name: x\n    workflow: 1042\n    actions:${indented(6)}\n`;
        }
        expectLocated(load(text), text, FILE);
      }),
      { numRuns: RUNS },
    );
  });

  it("random text built from YAML's significant characters: a valid set or located errors", () => {
    const chars = fc.constantFrom(
      ..." \n\t:-[]{},'\"#&*!|>%@`?$.()<=~0123456789abxyz_",
      "version: 1\n",
      "rules:\n",
      "  - ",
      "&a ",
      "*a",
      "<<: ",
      "---\n",
      "...\n",
      "\u0000",
      "\ufeff",
      "\u2028",
    );
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 120 }), (parts) => {
        const text = parts.join("");
        expectLocated(load(text), text, FILE);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("deep nesting in flow, block, values and JSONata: located errors or a set that plans", async () => {
    const kinds = [
      "flow-seq",
      "flow-map",
      "block-map",
      "block-seq",
      "value",
      "when-parens",
      "when-array",
      "template",
    ] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...kinds), fc.integer({ min: 1, max: 2500 }), async (kind, depth) => {
        let text: string;
        switch (kind) {
          case "flow-seq":
            text = `version: 1\nrules: ${"[".repeat(depth)}${"]".repeat(depth)}\n`;
            break;
          case "flow-map":
            text = `version: 1\nrules: ${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n`;
            break;
          case "block-map":
            text = `version: 1\nrules:\n${Array.from({ length: Math.min(depth, 1400) }, (_, i) => `${" ".repeat(i + 2)}k${i}:`).join("\n")} 1\n`;
            break;
          case "block-seq":
            text = `version: 1\nrules:\n${Array.from({ length: Math.min(depth, 1400) }, (_, i) => `${" ".repeat(2 * i + 2)}-`).join("\n")} 1\n`;
            break;
          case "value":
            text = ruleText({ value: `{ inputValue: ${"[".repeat(depth)}1${"]".repeat(depth)} }` });
            break;
          case "when-parens":
            text = ruleText({ when: JSON.stringify(`${"(".repeat(depth)}instance.id = 7${")".repeat(depth)}`) });
            break;
          case "when-array":
            text = ruleText({ when: JSON.stringify(`${"[".repeat(depth)}instance.id${"]".repeat(depth)} = 7`) });
            break;
          default:
            text = ruleText({
              value: `{ inputValue: ${JSON.stringify(`{{ ${"(".repeat(depth)}1${")".repeat(depth)} }}`)} }`,
            });
        }
        await planIfValid(text);
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  it("huge strings are refused or shortened: no message quotes more than a few hundred characters", () => {
    const huge = "a".repeat(MAX_RULE_FILE_CHARS - 2000);
    const cases = [
      `version: 1\nrules:\n  - name: ${huge}\n`,
      `version: 1\nrules:\n  - name: ${huge}\n    workflow: 1042\n    actions: [abort]\n    wrkflow: 1\n`,
      ruleText({ description: `[${JSON.stringify(huge)}]` }),
      ruleText({ when: JSON.stringify(`instance.name = "${huge}" and $nosuch()`) }),
      ruleText({ select: `{ status: [${huge}] }` }),
      ruleText({ extra: `    ${huge}: 1` }),
      `version: 1\nrules:\n  - name: x\n    workflow: 1042\n    actions: [${huge}]\n`,
    ];
    for (const text of cases) {
      const r = load(text);
      expectLocated(r, text, FILE);
      expect(r.ruleSet).toBeUndefined();
    }
    // beyond the size limit, nothing is parsed at all: one error at 1:1
    const tooBig = ruleText({ description: "b".repeat(MAX_RULE_FILE_CHARS) });
    const r = load(tooBig);
    expectLocated(r, tooBig, FILE);
    expect(r.diagnostics.map((d) => [d.line, d.col, d.code])).toEqual([[1, 1, "too-large"]]);
  });

  it("alias bombs (billion laughs) are refused quickly; small aliasing still works", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 2, max: 10 }),
        fc.constantFrom("description", "rules", "value"),
        (levels, fan, where) => {
          let anchors = `x0: &x0 ["lol"]\n`;
          for (let i = 1; i <= levels; i++)
            anchors += `x${i}: &x${i} [${Array.from({ length: fan }, () => `*x${i - 1}`).join(", ")}]\n`;
          const top = `*x${levels}`;
          // anchors live in a key the schema rejects, so a bomb that expands is always an error of some kind
          const text =
            where === "rules"
              ? `version: 1\n${anchors}rules: ${top}\n`
              : where === "description"
                ? `version: 1\n${anchors}rules:\n  - name: b\n    description: ${top}\n    workflow: 1042\n    actions: [abort]\n`
                : `version: 1\n${anchors}rules:\n  - name: b\n    workflow: 1042\n    select: { active_step_id: 20111 }\n    actions:\n      - complete_step: { step: 20111, inputs: [{ action: 50230, value: ${top} }] }\n`;
          const r = load(text);
          expectLocated(r, text, FILE);
          expect(r.ruleSet).toBeUndefined();
          if (fan ** levels >= 1000) {
            expect(
              r.diagnostics.some((d) => /aliases \(\*name\) expand too far/.test(d.message)),
              `${levels}×${fan}`,
            ).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
    // an anchor used a few times is ordinary YAML
    const ok = `version: 1\nrules:\n  - name: a\n    workflow: 1042\n    select: &s { status: [running] }\n    actions: [abort]\n  - name: b\n    workflow: 1042\n    select: *s\n    actions: [abort]\n`;
    expect(load(ok).ruleSet?.rules.map((r) => r.name)).toEqual(["a", "b"]);
  });

  it("duplicate keys at any depth are errors at the repeated key, in block and flow style", () => {
    const keyName = fc.constantFrom("name", "workflow", "status", "when", "x", "1", "true", "null", "'q'");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), keyName, fc.boolean(), (depth, key, flow) => {
        const lines = [
          "version: 1",
          "rules:",
          "  - name: d",
          "    workflow: 1042",
          "    actions: [abort]",
          "    description:",
        ];
        let indent = 6;
        for (let i = 0; i < depth; i++) {
          lines.push(`${" ".repeat(indent)}n${i}:`);
          indent += 2;
        }
        const pad = " ".repeat(indent);
        if (flow) lines.push(`${pad}{ ${key}: 1, other: 2, ${key}: 3 }`);
        else lines.push(`${pad}${key}: 1`, `${pad}other: 2`, `${pad}${key}: 3`);
        const text = `${lines.join("\n")}\n`;
        const r = load(text);
        expectLocated(r, text, FILE);
        const dup = r.diagnostics.filter((d) => d.code === "duplicate-key");
        expect(dup).toHaveLength(1);
        expect(dup[0]?.line).toBe(lines.length);
        expect(dup[0]?.message).toMatch(/^duplicate key/);
      }),
      { numRuns: RUNS },
    );
  });

  it("a mapping of 85,000 keys is refused at its place, without the quadratic duplicate check", () => {
    const keys = Array.from({ length: 85_000 }, (_, i) => `k${i}: 1`);
    const text = `version: 1\nrules:\n  - name: x\n    workflow: 1042\n    actions: [abort]\n    select: {${keys.join(",")}, k7: 2}\n`;
    expect(text.length).toBeLessThan(MAX_RULE_FILE_CHARS);
    const r = load(text);
    expectLocated(r, text, FILE);
    expect(r.diagnostics.find((d) => d.code === "too-large")?.message).toMatch(/mapping of 85001 entries/);
    expect(r.diagnostics.filter((d) => d.code === "duplicate-key")).toHaveLength(1);
  }, 20_000);

  it("lists longer than the limit are refused; at the limit a file still loads", () => {
    const rules = (n: number): string =>
      `version: 1\nrules:\n${Array.from({ length: n }, (_, i) => `  - { name: r${i}, workflow: 1042, select: { status: [completed] }, actions: [{ report: { group_by: status } }] }`).join("\n")}\n`;
    const atLimit = load(rules(MAX_COLLECTION_ENTRIES));
    expect(atLimit.ruleSet?.rules).toHaveLength(MAX_COLLECTION_ENTRIES);
    const over = rules(MAX_COLLECTION_ENTRIES + 1);
    const r = load(over);
    expectLocated(r, over, FILE);
    expect(r.diagnostics).toMatchObject([{ line: 3, col: 3, code: "too-large" }]);
  }, 20_000);
});

/**
 * Issue 28, point 9 (and the template bound of point 11): numbers from templates are written as JSONata's own string
 * conversion writes them (15 significant digits), a result no field can hold (Infinity, NaN) or a huge one is an
 * error for that instance and never a change, and `$now(picture)` honours its picture.
 */
import fc from "fast-check";
import jsonata from "jsonata";
import { describe, expect, it } from "vitest";
import { MAX_TEMPLATE_OUTPUT } from "../../src/engine/evaluate.js";
import { longestText, usesRegex } from "../../src/engine/regex-input.js";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-25T13:45:00.000Z");
const RUNS = Number(process.env.FLOWRULES_FC_RUNS ?? 100);

const rules = (inputs: string, when = "") => `
version: 1
rules:
  - name: bill
    workflow: 1042
    fields:
      q: { step: 20111, action: 50222 }
      p: { step: 20111, action: 50223 }
    select: { status: [running], active_step_id: 20111 }
${when}    actions:
      - save_step:
          step: 20111
          inputs:
${inputs}`;

const values = (q: unknown, p: unknown) => ({ "20111:50222": { inputValue: q }, "20111:50223": { inputValue: p } });

async function plan(yaml: string, items: Array<{ q: unknown; p: unknown }>) {
  const rs = await rulesFromYaml(yaml);
  return planFromInstances(
    [
      {
        rule: rs.rules[0]!,
        workflowId: 1042,
        instances: items.map((v, i) => instance({ id: i + 1, values: values(v.q, v.p) })),
      },
    ],
    NOW,
  );
}

const sent = (c: { request: { body: unknown } }, i = 0): unknown =>
  (c.request.body as { actions: Array<{ input_object: unknown }> }).actions[i]?.input_object;

describe("numbers from templates", () => {
  it("a whole template writes 947.1, not 947.0999999999999; a mixed one 'Total 947.1 EUR'", async () => {
    const p = await plan(
      rules(`            - action: 50230
              value: { inputValue: "{{ fields.q * fields.p }}" }
            - action: 50231
              value: { inputValue: "Total {{ fields.q * fields.p }} EUR" }
`),
      [{ q: 3, p: 315.7 }],
    );
    expect(3 * 315.7).not.toBe(947.1);
    expect(p.errors).toEqual([]);
    expect(sent(p.changes[0]!, 0)).toEqual({ inputValue: 947.1 });
    expect(sent(p.changes[0]!, 1)).toEqual({ inputValue: "Total 947.1 EUR" });
  });

  it("a mixed template writes every number as JSONata's own string conversion does (property)", async () => {
    const rs = await rulesFromYaml(
      rules(`            - action: 50230
              value: { inputValue: "{{ fields.q * fields.p }}|{{ fields.q / fields.p }}|{{ fields.q + fields.p }}" }
`),
    );
    const reference = jsonata('$string(q * p) & "|" & $string(q / p) & "|" & $string(q + p)');
    const finite = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 });
    await fc.assert(
      fc.asyncProperty(finite, finite, async (q, p) => {
        fc.pre(p !== 0 && Number.isFinite(q * p) && Number.isFinite(q / p));
        const out = await planFromInstances(
          [{ rule: rs.rules[0]!, workflowId: 1042, instances: [instance({ id: 1, values: values(q, p) })] }],
          NOW,
        );
        expect(out.errors).toEqual([]);
        expect(sent(out.changes[0]!)).toEqual({ inputValue: (await reference.evaluate({ q, p })) as string });
      }),
      { numRuns: RUNS },
    );
  });

  it("{{ q / 0 }} (Infinity, NaN) is an error for that instance, not a null written; the others are planned", async () => {
    const p = await plan(
      rules(`            - action: 50230
              value: { inputValue: "{{ fields.q / fields.p }}" }
`),
      [
        { q: 3, p: 0 },
        { q: 0, p: 0 },
        { q: 3, p: 2 },
      ],
    );
    expect(p.changes.map((c) => c.instance_id)).toEqual([3]);
    expect(sent(p.changes[0]!)).toEqual({ inputValue: 1.5 });
    expect(p.errors.map((e) => e.instance_id)).toEqual([1, 2]);
    expect(p.errors[0]?.message).toMatch(
      /^rule "bill", instance 1: the template gives Infinity, which no field can hold .*in `\s*fields\.q \/ fields\.p\s*` \(.*rules\.yaml:\d+:\d+\)$/,
    );
    expect(p.errors[1]?.message).toMatch(/the template gives NaN/);
  });

  it("a template whose output is larger than the bound is an error for that instance", async () => {
    const p = await plan(
      rules(`            - action: 50230
              value: { inputValue: "x{{ $pad('', fields.q, 'y') }}" }
`),
      [
        { q: MAX_TEMPLATE_OUTPUT + 1, p: 1 },
        { q: 10, p: 1 },
      ],
    );
    expect(p.changes.map((c) => c.instance_id)).toEqual([2]);
    expect(p.errors[0]?.message).toMatch(
      /^rule "bill", instance 1: the template gives 100,001 characters, more than the 100,000 a value may hold/,
    );
  });
});

describe("$now with a picture", () => {
  it("formats the plan's instant as JSONata's $now(picture, timezone) does; without one it is the ISO instant", async () => {
    const p = await plan(
      rules(
        `            - action: 50230
              value: { inputValue: "{{ $now('[Y0001]-[M01]-[D01]') }}" }
            - action: 50231
              value: { inputValue: "{{ $now('[H01]:[m01]', '+0100') }} / {{ $now() }}" }
`,
        "    when: $now('[Y0001]') = '2026'\n",
      ),
      [{ q: 1, p: 1 }],
    );
    expect(p.errors).toEqual([]);
    expect(sent(p.changes[0]!, 0)).toEqual({ inputValue: "2026-11-25" });
    expect(sent(p.changes[0]!, 1)).toEqual({ inputValue: "14:45 / 2026-11-25T13:45:00.000Z" });
  });
});

describe("a regular expression over a huge text", () => {
  // JSONata's 1 s limit is checked between steps: one regex call over millions of characters is bounded by its input
  const RULE = `
version: 1
rules:
  - name: scan
    workflow: 1042
    select: { status: [running] }
    when: $contains(instance.name, /x+y$/)
    actions: [abort]
  - name: plain
    workflow: 1042
    select: { status: [running] }
    when: $contains(instance.name, "x")
    actions: [abort]
`;

  it("is an error for that instance; other instances, and expressions without a regex, are evaluated as usual", async () => {
    const rs = await rulesFromYaml(RULE);
    const huge = { ...instance({ id: 1 }), name: `${"x".repeat(3_000_000)}y` };
    const small = { ...instance({ id: 2 }), name: "xxy" };
    const [scan, plain] = rs.rules;
    const p = await planFromInstances(
      [
        { rule: scan!, workflowId: 1042, instances: [huge, small] },
        { rule: plain!, workflowId: 1042, instances: [huge] },
      ],
      NOW,
    );
    expect(p.errors.map((e) => [e.rule, e.instance_id])).toEqual([["scan", 1]]);
    expect(p.errors[0]?.message).toMatch(
      /longer than the 100,000 characters an expression with a regular expression may scan/,
    );
    expect(p.changes.map((c) => `${c.rule}:${c.instance_id}`).sort()).toEqual(["plain:1", "scan:2"]);
  });
});

describe("the regex input check's shortcuts", () => {
  // longestText stops at the first text past the limit, and usesRegex is worked out once per expression: both must
  // answer as the plain computation does
  const trueLongest = (v: unknown): number =>
    typeof v === "string"
      ? v.length
      : Array.isArray(v)
        ? Math.max(0, ...v.map(trueLongest))
        : typeof v === "object" && v !== null
          ? Math.max(0, ...Object.values(v).map(trueLongest))
          : 0;

  it("longestText decides 'over the limit' exactly as a full scan does, and is exact below it (property)", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.jsonValue(),
        fc.array(fc.string()),
        fc.nat(40),
        (instance, snapshot, tags, limit) => {
          const ctx = { instance: { v: instance }, fields: {}, snapshot, tags, now: "" };
          const full = trueLongest([ctx.instance, ctx.fields, ctx.snapshot, ctx.tags]);
          const fast = longestText(ctx, limit);
          expect(fast > limit).toBe(full > limit);
          if (full <= limit) expect(fast).toBe(full);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  it("usesRegex answers the same on first and later calls, and as the expression's AST says (property)", async () => {
    const exprs = [
      "$contains(instance.name, /a+/)",
      'instance.name = "x"',
      "$match(instance.name, /[0-9]{2}/)[0]",
      "$replace(instance.name, 'a', 'b')",
      "/x/ ? 1 : 0",
    ];
    const rs = await rulesFromYaml(`version: 1
rules:
${exprs.map((e, i) => `  - name: r${i}\n    workflow: 1042\n    when: ${JSON.stringify(e)}\n    actions: [abort]\n`).join("")}`);
    fc.assert(
      fc.property(fc.array(fc.nat(exprs.length - 1), { minLength: 1, maxLength: 20 }), (picks) => {
        for (const i of picks) {
          const when = rs.rules[i]!.when!;
          expect(usesRegex(when)).toBe(JSON.stringify(when.expr.ast()).includes('"type":"regex"'));
        }
      }),
      { numRuns: RUNS },
    );
  });
});

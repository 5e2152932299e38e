/**
 * Issue 35, point 6: many rules never blow up validation. The checks across rules are bucketed by (workflow, target,
 * select.status) — linear in the number of actions, one warning per action at most — where they compared every pair
 * (3 × 700 rules on one step: 43.6 s, 2.39 GB, then `internal error … Maximum call stack size exceeded`). The count
 * of bucket comparisons is checked here, never a time (figures: docs/performance.md, "Many rules"). The buckets are a
 * shortcut: a property over random rule sets shows the warnings equal those of the pairwise comparison.
 */
import { describe, expect, it } from "vitest";
import { actionKind, type CompiledAction } from "../../src/actions/index.js";
import { resolveConflicts } from "../../src/engine/conflicts.js";
import type { PlannedChange } from "../../src/plan/types.js";
import { conflictChecks } from "../../src/rules/checks.js";
import { compileSources, MAX_RULES_PER_RUN } from "../../src/rules/index.js";
import type { CompiledRule } from "../../src/rules/types.js";
import { prng } from "./helpers.js";

function ruleFile(rules: string[]): string {
  return `version: 1\nrules:\n${rules.join("\n")}\n`;
}

function stepRule(name: string, step: number, status?: string): string {
  return `  - name: ${name}\n    workflow: 1042\n${status ? `    select: { status: ${status} }\n` : ""}    actions:\n      - complete_step: { step: ${step} }`;
}

describe("3 × 700 rules acting on one step", () => {
  it("validate with one warning per rule after the first, no internal error, a linear number of comparisons", () => {
    const sources = [0, 1, 2].map((f) => ({
      file: `f${f}.yaml`,
      text: ruleFile(Array.from({ length: 700 }, (_, i) => stepRule(`r-${f}-${i}`, 20111))),
    }));
    const loaded = compileSources(sources);
    expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(loaded.ruleSet?.rules).toHaveLength(2100);
    const warnings = loaded.diagnostics.filter((d) => d.code === "conflict");
    expect(warnings).toHaveLength(2099);
    expect(new Set(warnings.map((w) => w.rule)).size).toBe(2099);
    expect(warnings[0]?.message).toBe(
      'rules "r-0-0" (f0.yaml:6:9) and "r-0-1" may conflict on workflow 1042: both act on step 20111; an instance matched by both is reported as a conflict at plan time',
    );
    expect(warnings.at(-1)?.message).toMatch(
      /^rules "r-0-0" \(f0\.yaml:6:9\) and "r-2-699" may conflict on workflow 1042: both act on step 20111 \(and 2098 more earlier actions\);/,
    );
    // one bucket looked at per action (one step, one status key), where the pairs were 2,203,950
    const { comparisons } = conflictChecks(loaded.ruleSet?.rules ?? []);
    expect(comparisons).toBeLessThanOrEqual(2100);
  });

  it("a rule set over the limit is one located error, and the rest is not compiled", () => {
    const sources = [0, 1].map((f) => ({
      file: `f${f}.yaml`,
      text: ruleFile(Array.from({ length: 30 }, (_, i) => stepRule(`r-${f}-${i}`, 20111 + i))),
    }));
    // a file after the limit is not even parsed: its broken YAML is not reported
    sources.push({ file: "f2.yaml", text: "rules: [\n" });
    const loaded = compileSources(sources, { maxRules: 40 });
    expect(loaded.ruleSet).toBeUndefined();
    expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([
      expect.objectContaining({
        file: "f1.yaml",
        line: 43,
        col: 5,
        rule: "r-1-10",
        code: "too-many-rules",
        message: "more than 40 rules in one run (this is rule 41): split them across runs, one folder each",
      }),
    ]);
    expect(MAX_RULES_PER_RUN).toBe(50_000);
  });
});

// ---- the buckets against the pairwise comparison ------------------------------------------------------------------

type Target = { step: number } | "instance" | undefined;

function targetOf(a: CompiledAction): Target {
  const kind = actionKind(a.kind);
  return kind.mutating ? kind.target(a) : undefined;
}

function phrase(a: CompiledAction): string {
  const kind = actionKind(a.kind);
  return kind.mutating ? kind.phrase(a) : "reports";
}

/** The old pairwise check's words for a pair that may meet, or undefined. */
function why(a: CompiledAction, b: CompiledAction): string | undefined {
  const ta = targetOf(a);
  const tb = targetOf(b);
  if (ta === undefined || tb === undefined) return undefined;
  if (ta !== "instance" && tb !== "instance") return ta.step === tb.step ? `both act on step ${ta.step}` : undefined;
  if (ta === "instance" && tb !== "instance") return `one ${phrase(a)} in which the other ${phrase(b)}`;
  if (tb === "instance" && ta !== "instance") return `one ${phrase(b)} in which the other ${phrase(a)}`;
  return a.kind === b.kind ? undefined : `one ${phrase(a)} and the other ${phrase(b)}`;
}

function statusesOf(r: CompiledRule): string[] | undefined {
  const s = r.select.status;
  return s === undefined ? undefined : (Array.isArray(s) ? s : [s]).map(String);
}

function mayMeet(q: CompiledRule, r: CompiledRule): boolean {
  const a = statusesOf(q);
  const b = statusesOf(r);
  return a === undefined || b === undefined || a.some((x) => b.includes(x));
}

/** The workflows a rule acts in, by id ("*": any). */
const wfs = (r: CompiledRule): number[] | "*" =>
  r.workflows === "*" ? "*" : [...new Set((r.workflows ?? [r.workflow]).map((w) => ("id" in w ? w.id : Number.NaN)))];
const shareWorkflow = (q: CompiledRule, r: CompiledRule): boolean => {
  const a = wfs(q);
  const b = wfs(r);
  return a === "*" || b === "*" || a.some((x) => b.includes(x));
};
const label = (ids: number[] | "*"): string =>
  ids === "*"
    ? "any workflow"
    : `workflow ${ids.length > 1 ? `${ids.slice(0, -1).join(", ")} or ${ids.at(-1)}` : ids[0]}`;
/** Where two rules meet, as the warning names it: the first shared workflow in the later rule's order, else the narrower. */
const where = (q: CompiledRule, r: CompiledRule): string => {
  const a = wfs(q);
  const b = wfs(r);
  if (b === "*") return label(a);
  if (a === "*") return label(b);
  return label([b.find((x) => a.includes(x)) ?? Number.NaN]);
};
const more = (n: number): string => (n > 1 ? ` (and ${n - 1} more earlier ${n === 2 ? "action" : "actions"})` : "");

/** Every pair compared, as the check did before buckets; each action's warning names the first pair it is in. */
function pairwise(rules: CompiledRule[]): string[] {
  const out: string[] = [];
  rules.forEach((r, i) => {
    r.actions.forEach((b, k) => {
      const within = r.actions.slice(0, k).filter((a) => why(a, b));
      if (within[0])
        out.push(
          `${b.pos.line}:${b.pos.col} two actions of rule "${r.name}" may conflict: ${why(within[0], b)}${more(within.length)}`,
        );
    });
    r.actions.forEach((b) => {
      const across = rules
        .slice(0, i)
        .filter((q) => shareWorkflow(q, r) && mayMeet(q, r))
        .flatMap((q) => q.actions.filter((a) => why(a, b)).map((a) => ({ q, a })));
      const first = across[0];
      if (first) {
        out.push(
          `${b.pos.line}:${b.pos.col} rules "${first.q.name}" (mem.yaml:${first.a.pos.line}:${first.a.pos.col}) and "${r.name}" may conflict on ${where(first.q, r)}: ` +
            `${why(first.a, b)}${more(across.length)}; an instance matched by both is reported as a conflict at plan time`,
        );
      }
    });
  });
  return out;
}

function bucketed(rules: CompiledRule[]): string[] {
  return conflictChecks(rules).diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`);
}

function randomRules(seed: number): string {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const statuses = [undefined, "running", "completed", "[running, completed]", "[aborted]"];
  const rules: string[] = [];
  const n = 2 + Math.floor(rnd() * 14);
  for (let i = 0; i < n; i++) {
    const actions = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () =>
      pick([
        `      - complete_step: { step: ${1 + Math.floor(rnd() * 3)} }`,
        `      - save_step: { step: ${1 + Math.floor(rnd() * 3)}, inputs: [{ action: 7, value: 1 }] }`,
        "      - abort",
        "      - report: { group_by: status }",
      ]),
    );
    const status = pick(statuses);
    rules.push(
      `  - name: r${i}\n    workflow: ${pick(["1042", "1043", "1044", "[1042, 1043]", "[1044, 1043]", '"*"'])}\n${status ? `    select: { status: ${status} }\n` : ""}    actions:\n${actions.join("\n")}`,
    );
  }
  return ruleFile(rules);
}

describe("bucketed checks equal the pairwise comparison", () => {
  it('over 150 random rule sets (rules over one workflow, several and "*"): the same actions warned, naming the same earliest action, with the same count', () => {
    let warned = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const loaded = compileSources([{ file: "mem.yaml", text: randomRules(seed) }]);
      const rules = loaded.ruleSet?.rules;
      if (!rules) throw new Error(`seed ${seed}: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
      const want = pairwise(rules);
      warned += want.length;
      expect(bucketed(rules).sort(), `seed ${seed}`).toEqual(want.sort());
    }
    expect(warned).toBeGreaterThan(150);
  });
});

// ---- conflicts at plan time: the same, per instance ---------------------------------------------------------------

function change(rule: string, instance: number, kind: string, step?: number): PlannedChange {
  return {
    id: `${rule}:${kind}:${instance}${step === undefined ? "" : `:${step}`}`,
    rule,
    instance_id: instance,
    instance_name: "",
    process_id: 1042,
    kind,
    ...(step === undefined ? {} : { step_id: step }),
    request: {
      method: "POST",
      path: step === undefined ? "/instances/bulk/abort" : `/instances/${instance}/complete_step/`,
      body: {},
    },
    before: {},
    after: {},
    precondition: { status: "running" },
  };
}

const changeTarget = (c: PlannedChange): "instance" | number => (c.step_id === undefined ? "instance" : c.step_id);

function planClash(a: PlannedChange, b: PlannedChange): boolean {
  const ta = changeTarget(a);
  const tb = changeTarget(b);
  if (ta === "instance" && tb === "instance") return a.kind !== b.kind;
  return ta === "instance" || tb === "instance" || ta === tb;
}

describe("plan-time conflicts by bucket equal the pairwise rule", () => {
  it("over 400 random instances: the same changes left out, one error per change meeting an earlier one, naming the earliest", () => {
    let errors = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const rnd = prng(seed);
      const changes = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, i) => {
        const r = rnd();
        return r < 0.25
          ? change(`r${i}`, 7, "abort")
          : change(`r${i}`, 7, r < 0.6 ? "complete_step" : "save_step", 1 + Math.floor(rnd() * 3));
      });
      const got = resolveConflicts(changes);
      // pairwise: a change is left out when it clashes with any other, or repeats an earlier whole-instance change
      const keep = changes.filter(
        (c, i) =>
          !changes.some((o, j) => j !== i && planClash(o, c)) &&
          !changes.slice(0, i).some((o) => o.kind === c.kind && changeTarget(c) === "instance"),
      );
      expect(got.changes, `seed ${seed}`).toEqual(keep);
      const want = changes.flatMap((c, i) => {
        const first = changes.slice(0, i).find((o) => planClash(o, c));
        return first ? [`"${first.rule}" .* and rule "${c.rule}"`] : [];
      });
      expect(got.errors.length, `seed ${seed}`).toBe(want.length);
      got.errors.forEach((e, i) => expect(e.message).toMatch(new RegExp(want[i]!)));
      errors += want.length;
    }
    expect(errors).toBeGreaterThan(400);
  });
});

/** The registry of action kinds (src/actions/index.ts): what every kind must bring, and what it refuses. */
import { describe, expect, it } from "vitest";
import {
  ACTION_KINDS,
  ACTIONS,
  actionKind,
  checkPlannedChange,
  isMutating,
  kindOrder,
  MUTATING_KINDS,
  mutatingKind,
} from "../../src/actions/index.js";
import { effectOf } from "../../src/apply/verify.js";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { instance } from "../helpers/instances.js";
import { fixtureRules } from "../helpers/rules.js";
import { change, NOW, record, refusals, T1 } from "./helpers.js";

describe("every kind in ACTIONS", () => {
  it("has a unique name, a description, and a schema whose description is the kind's", () => {
    const names = ACTIONS.map((m) => m.kind);
    expect(new Set(names).size).toBe(names.length);
    expect(ACTION_KINDS).toEqual(names);
    for (const m of ACTIONS) {
      expect(m.description.length, m.kind).toBeGreaterThan(10);
      const s = m.schema as { description?: string; anyOf?: Array<{ description?: string }> };
      // the bare-or-object kinds are alternatives, each described
      const described = s.anyOf ? s.anyOf.map((a) => a.description) : [s.description];
      for (const d of described) expect(d, m.kind).toBe(m.description);
    }
  });

  it("a mutating kind has a presentation (symbol, legend, summary phrase, colour) and a sender", () => {
    const mutating = ACTIONS.filter((m) => m.mutating);
    expect(mutating.map((m) => m.kind)).toEqual([...MUTATING_KINDS]);
    const symbols = new Set<string>();
    for (const m of mutating) {
      const k = mutatingKind(m.kind);
      expect(k.presentation.symbol.length, m.kind).toBeGreaterThan(0);
      symbols.add(k.presentation.symbol);
      expect(k.presentation.legend.length, m.kind).toBeGreaterThan(0);
      expect(k.presentation.summary(2), m.kind).toMatch(/^2 /);
      expect(["green", "yellow", "red", "cyan"]).toContain(k.presentation.colour);
      expect(["each", "batch"]).toContain(k.send.mode);
      expect(typeof k.send.send).toBe("function");
    }
    // each kind reads differently in a plan
    expect(symbols.size).toBe(mutating.length);
  });

  it("kinds that make no change have neither", () => {
    for (const m of ACTIONS.filter((k) => !k.mutating)) {
      expect("presentation" in m, m.kind).toBe(false);
      expect("send" in m, m.kind).toBe(false);
    }
  });

  it("kindOrder() is the position in ACTIONS; isMutating() asks the kind", () => {
    ACTIONS.forEach((m, i) => expect(kindOrder(m.kind)).toBe(i));
    expect(kindOrder("tag")).toBe(-1);
    for (const rule of fixtureRules("kinds").rules) {
      for (const a of rule.actions) expect(isMutating(a)).toBe(actionKind(a.kind).mutating);
    }
  });
});

describe("a kind the registry does not know", () => {
  it("actionKind() throws, naming the kind and every known kind", () => {
    expect(() => actionKind("tag")).toThrow(
      `unknown action kind "tag" (this flowrules knows ${ACTION_KINDS.join(", ")})`,
    );
    for (const k of ACTION_KINDS) expect(() => actionKind("tag")).toThrow(k);
  });

  it("mutatingKind() also refuses a kind that makes no change", () => {
    expect(() => mutatingKind("tag")).toThrow(/unknown action kind "tag"/);
    const report = ACTIONS.find((m) => !m.mutating);
    if (!report) throw new Error("no kind without changes");
    expect(() => mutatingKind(report.kind)).toThrow(`"${report.kind}" makes no change`);
  });

  it("checkPlannedChange() refuses an unknown kind, and a kind that makes no change, naming what it applies", () => {
    const known = `this flowrules applies ${MUTATING_KINDS.join(", ")}`;
    expect(refusals(checkPlannedChange, { ...change("abort"), kind: "tag" })).toEqual([
      `kind: unknown kind "tag"; ${known}`,
    ]);
    expect(refusals(checkPlannedChange, { ...change("abort"), kind: "report" })).toEqual([
      `kind: unknown kind "report"; ${known}`,
    ]);
  });

  it("checkPlannedChange() passes a known change to its kind's own check", () => {
    // each kind's own test shows the change it plans passes (test/actions/<kind>.test.ts); this is the dispatch
    for (const k of MUTATING_KINDS) {
      const planned = change(k);
      expect(refusals(checkPlannedChange, planned)).toEqual(refusals(mutatingKind(k).checkChange, planned));
      const moved = { ...planned, request: { ...planned.request, path: "/elsewhere" } };
      expect(refusals(checkPlannedChange, moved)).toEqual(refusals(mutatingKind(k).checkChange, moved));
      expect(refusals(checkPlannedChange, moved).length).toBeGreaterThan(0);
    }
  });

  it("apply's effectOf() asks the change's kind, and throws for a kind it does not know", () => {
    const r = record({ aborted_time: T1 });
    for (const k of MUTATING_KINDS) {
      const c = change(k);
      expect(effectOf(c, r)).toEqual(mutatingKind(k).effect(c, r));
    }
    expect(() => effectOf({ ...change("abort"), kind: "tag" }, r)).toThrow(/unknown action kind "tag"/);
  });
});

describe("registry order in plans", () => {
  it("MUTATING_KINDS is the order of the plan summary's keys, before reports and errors", async () => {
    const rs = fixtureRules("kinds");
    // each rule on instances of its own, so that no two changes clash
    const claim = (id: number) =>
      instance({
        id,
        values: { "20111:50222": { inputValue: 40 } },
        record: { active_step_ids: [20111], tags: ["a"] },
      });
    const plan = await planFromInstances(
      rs.rules.map((rule, i) => ({ rule, workflowId: 1042, instances: [claim(10 * i + 1), claim(10 * i + 2)] })),
      NOW,
    );
    expect(plan.errors).toEqual([]);
    expect(Object.keys(plan.summary)).toEqual([...MUTATING_KINDS, "reports", "errors"]);
    // every kind of the fixture is counted under its own key
    expect(plan.summary).toMatchObject({ complete_step: 2, save_step: 2, abort: 4, reports: 2, errors: 0 });
    expect(plan.reports.map((r) => r.rule)).toEqual(["by-tag", "by-amount"]);
  });
});

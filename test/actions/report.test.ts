/** report (src/actions/report.ts): its schema fragment, compile (keys and columns), entries and the built table. */
import { describe, expect, it } from "vitest";
import { actionKind, report, ReportEntries } from "../../src/actions/index.js";
import { DEFAULT_REPORT_COLUMNS, NO_TAG, NO_VALUE, REGULAR_PRIORITY } from "../../src/actions/report.js";
import { instance } from "../helpers/instances.js";
import { diagnosticsOf, fragmentValidator, kindsRule, reportEntryOf } from "./helpers.js";

const kind = actionKind("report");
if (kind.mutating) throw new Error("report must make no change");
const reportKind = kind;

describe("report in the registry", () => {
  it("is the module src/actions/report.ts exports; it makes no change, so it has no presentation and no sender", () => {
    expect(reportKind).toBe(report);
    expect(reportKind.mutating).toBe(false);
    expect(reportKind.bare).toBe(false);
    expect("presentation" in reportKind).toBe(false);
    expect("send" in reportKind).toBe(false);
  });
});

describe("report schema fragment", () => {
  const errors = fragmentValidator("report");

  it("accepts a group key with or without columns and title", () => {
    expect(errors({ report: { group_by: "tags" } })).toEqual([]);
    expect(
      errors({ report: { group_by: "fields.amount", columns: ["id", "fields.amount"], title: "Claims" } }),
    ).toEqual([]);
  });

  it("rejects a missing group_by, an empty column list, a non-string title, unknown keys and the bare string", () => {
    expect(errors({ report: { columns: ["id"] } })).not.toEqual([]);
    expect(errors({ report: { group_by: "tags", columns: [] } })).not.toEqual([]);
    expect(errors({ report: { group_by: "tags", title: 3 } })).not.toEqual([]);
    expect(errors({ report: { group_by: "tags", format: "csv" } })).not.toEqual([]);
    expect(errors("report")).not.toEqual([]);
  });

  it("has a description for editors", () => {
    expect(reportKind.schema.description).toBe(reportKind.description);
    expect(reportKind.description).toMatch(/no change/);
  });
});

describe("report compile (test/fixtures/rules/kinds.yaml)", () => {
  it("keeps the group key, columns and title as written, in their normal form", () => {
    expect(kindsRule("by-tag").actions[0]).toMatchObject({
      kind: "report",
      group_by: "tags",
      columns: ["id", "fields.amount"],
      title: "Claims by tag",
    });
  });

  it("a bare field alias becomes fields.<alias>; columns default to id, name, status; no title", () => {
    const action = kindsRule("by-amount").actions[0];
    expect(action).toMatchObject({ kind: "report", group_by: "fields.amount", columns: [...DEFAULT_REPORT_COLUMNS] });
    expect(action).not.toHaveProperty("title");
    if (action?.kind !== "report") throw new Error("not a report");
    expect(reportKind.reads(action)).toEqual([]);
  });

  it("an unknown group key, column or alias is an error at its place, with a suggestion", () => {
    const groupBy = diagnosticsOf("      - report: { group_by: tag }\n");
    expect(groupBy).toHaveLength(1);
    expect(groupBy[0]).toMatchObject({ line: 7, code: "report-key" });
    expect(groupBy[0]?.message).toMatch(/unknown group_by "tag" in rule "r"; did you mean "tags"\?/);

    const column = diagnosticsOf("      - report: { group_by: tags, columns: [id, nme] }\n");
    expect(column).toHaveLength(1);
    expect(column[0]?.message).toMatch(
      /unknown report column "nme" .*did you mean "name"\? \(valid: id, name, status, .*or a field alias: fields\.amount\)$/,
    );

    const alias = diagnosticsOf("      - report: { group_by: fields.amout }\n");
    expect(alias).toHaveLength(1);
    expect(alias[0]).toMatchObject({ code: "unknown-field" });
    expect(alias[0]?.message).toMatch(/unknown field alias "amout" .*did you mean "fields\.amount"\?/);
  });
});

describe("report entries and table", () => {
  const byTag = kindsRule("by-tag");
  const byAmount = kindsRule("by-amount");

  it("an instance counts under each of its tags, once per tag; untagged under (no tag)", () => {
    const e = reportEntryOf(
      byTag,
      instance({ id: 31, values: { "20111:50222": { inputValue: 40 } }, record: { tags: ["travel", "q4", "travel"] } }),
    );
    expect(e).toEqual({ instance_id: 31, keys: ["travel", "q4"], row: { id: 31, "fields.amount": 40 } });
    expect(reportEntryOf(byTag, instance({ id: 32, record: { tags: [] } })).keys).toEqual([NO_TAG]);
  });

  it("a field key groups by the field's value; no value is (no value); a missing column is null", () => {
    const e = reportEntryOf(byAmount, instance({ id: 33, values: { "20111:50222": { inputValue: 250 } } }));
    expect(e.keys).toEqual(["250"]);
    expect(e.row).toEqual({ id: 33, name: "Instance 33", status: "running" });
    expect(reportEntryOf(byAmount, instance({ id: 34 })).keys).toEqual([NO_VALUE]);
    expect(reportEntryOf(byTag, instance({ id: 35 })).row).toEqual({ id: 35, "fields.amount": null });
  });

  it("build(): groups by count (largest first) then key by code point; rows by instance id; title from the action or the rule", () => {
    const action = byTag.actions[0];
    if (action?.kind !== "report") throw new Error("not a report");
    const entries = [
      { instance_id: 5, keys: ["b"], row: { id: 5 } },
      { instance_id: 2, keys: ["a", "B"], row: { id: 2 } },
      { instance_id: 9, keys: ["b", "a"], row: { id: 9 } },
      { instance_id: 1, keys: ["B"], row: { id: 1 } },
    ];
    const built = reportKind.build(byTag, action, ReportEntries.of(entries));
    expect(built).toEqual({
      rule: "by-tag",
      title: "Claims by tag",
      group_by: "tags",
      columns: ["id", "fields.amount"],
      groups: [
        { key: "B", count: 2, instance_ids: [1, 2] },
        { key: "a", count: 2, instance_ids: [2, 9] },
        { key: "b", count: 2, instance_ids: [5, 9] },
      ],
      rows: [{ id: 1 }, { id: 2 }, { id: 5 }, { id: 9 }],
    });
    const untitled = byAmount.actions[0];
    if (untitled?.kind !== "report") throw new Error("not a report");
    expect(reportKind.build(byAmount, untitled, new ReportEntries()).title).toBe("by-amount");
  });

  it("priority groups fall back to Regular", () => {
    const rule = {
      ...byTag,
      actions: [{ kind: "report" as const, group_by: "priority", columns: ["id"], pos: byTag.pos }],
    };
    expect(reportEntryOf(rule, instance({ id: 36, record: {} })).keys).toEqual([REGULAR_PRIORITY]);
    expect(reportEntryOf(rule, instance({ id: 37, record: { priority: "High" } })).keys).toEqual(["High"]);
  });
});

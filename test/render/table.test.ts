/**
 * The table helper aligns by display width: CJK and emoji take two columns each, colour codes none. Checked on the
 * helper itself (examples and random cells over many seeds) and on the text views that pad through it: a plan's
 * report table and the rule-test results table.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import pc from "picocolors";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { testsText } from "../../src/render/test-results/text.js";
import { displayWidth, padDisplay, table } from "../../src/render/table.js";
import type { TestRun } from "../../src/rule-tests/types.js";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";

const ANSI = /\x1b\[[0-9;]*m/g;

/** The display column at which `needle` starts in `line` (colour codes ignored). */
function columnOf(line: string, needle: string): number {
  const plain = line.replace(ANSI, "");
  const at = plain.indexOf(needle);
  expect(at, `${needle} in ${plain}`).toBeGreaterThanOrEqual(0);
  return displayWidth(plain.slice(0, at));
}

describe("displayWidth and padDisplay", () => {
  it("counts terminal columns, not UTF-16 units", () => {
    expect(displayWidth("abc")).toBe(3);
    expect(displayWidth("経費精算")).toBe(8);
    expect(displayWidth("🚀")).toBe(2);
    expect(displayWidth("👩‍💻")).toBe(2);
    expect(displayWidth("e\u0301")).toBe(1);
    expect(displayWidth(pc.createColors(true).red("FAIL"))).toBe(4);
    expect(padDisplay("経費", 6)).toBe("経費  ");
    expect(padDisplay("7", 3, "right")).toBe("  7");
    expect(padDisplay("toolong", 3)).toBe("toolong");
  });
});

describe("table", () => {
  it("aligns CJK and emoji names with ASCII ones", () => {
    const lines = table([
      ["rule", "count", "where"],
      ["approve-small", "3", "a.yaml"],
      ["経費精算-承認", "12", "b.yaml"],
      ["🚀-launch", "7", "c.yaml"],
    ]);
    const counts = [
      ["count", 0],
      ["3", 1],
      ["12", 2],
      ["7", 3],
    ] as const;
    const starts = counts.map(([n, i]) => columnOf(lines[i] ?? "", n));
    expect(new Set(starts).size).toBe(1);
    const files = ["where", "a.yaml", "b.yaml", "c.yaml"].map((f, i) => columnOf(lines[i] ?? "", f));
    expect(new Set(files).size).toBe(1);
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
  });

  it("right alignment, indent and the dashes rule use display widths too", () => {
    const lines = table(
      [
        ["種類", "n"],
        ["abort", "10"],
        ["完了", "2"],
      ],
      { align: ["left", "right"], indent: "  ", rule: true },
    );
    expect(lines).toEqual(["  種類    n", "  -----  --", "  abort  10", "  完了    2"]);
  });

  it("every cell of a column starts at one display column, over random cells of mixed scripts", () => {
    const piece = fc.constantFrom("a", "Z", "-", "経", "費", "🚀", "👍", "é", "ü", "한", "ｶ");
    const cellArb = fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => p.join(""));
    fc.assert(
      fc.property(
        fc.array(fc.array(cellArb, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 8 }),
        (rows) => {
          const tagged = rows.map((r, i) => [r[0] ?? "", `#${i}#${r[1] ?? ""}`, `@${i}@${r[2] ?? ""}`]);
          const lines = table(tagged);
          const second = tagged.map((r, i) => columnOf(lines[i] ?? "", r[1] ?? ""));
          const third = tagged.map((r, i) => columnOf(lines[i] ?? "", r[2] ?? ""));
          expect(new Set(second).size).toBe(1);
          expect(new Set(third).size).toBe(1);
          // the widest cell of the first column is followed by exactly the gap
          expect(second[0]).toBe(Math.max(...tagged.map((r) => displayWidth(r[0] ?? ""))) + 2);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("text views pad by display width", () => {
  it("a plan's report table with CJK and emoji tags and names", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: by-tag
    workflow: 1042
    actions:
      - report: { title: Claims by tag, group_by: tags, columns: [id, name] }
`);
    const claims = [
      { ...instance({ id: 101, record: { tags: ["経費"] } }), name: "出張 東京" },
      { ...instance({ id: 102, record: { tags: ["🚀launch"] } }), name: "Trip" },
      { ...instance({ id: 103, record: { tags: ["travel-long-tag"] } }), name: "Lunch" },
    ];
    const plan = await planFromInstances(
      [{ rule: rs.rules[0]!, workflowId: 1042, instances: claims }],
      new Date("2026-11-01T12:00:00Z"),
    );
    const out = PLAN_FORMATS.text(plan, { color: false }).split("\n");
    const row = (needle: string): string => out.find((l) => l.includes(needle)) ?? "";
    // group table: the counts line up under "count"
    const countCol = columnOf(out.find((l) => /\bcount\b/.test(l)) ?? "", "count");
    for (const key of ["経費", "🚀launch", "travel-long-tag"]) {
      const line = out.find((l) => l.trimStart().startsWith(key) && /\d\s*$/.test(l)) ?? "";
      expect(columnOf(line, "1"), key).toBe(countCol);
    }
    // columns table: the names start at one column whatever the id
    expect(columnOf(row("出張 東京"), "出張")).toBe(columnOf(row("Lunch"), "Lunch"));
  });

  it("the rule-test results table with CJK and emoji case names, coloured or not", () => {
    const pos = (line: number) => ({ file: "rules/経費.test.yaml", line, col: 5 });
    const run: TestRun = {
      files: ["rules/経費.test.yaml"],
      diagnostics: [],
      results: [
        { pos: pos(7), rules: ["経費精算"], name: "小額は承認", status: "pass", failures: [], durationMs: 1 },
        {
          pos: pos(15),
          rules: ["approve"],
          name: "🚀 fast path",
          status: "fail",
          failures: [{ subject: "matched" }],
          durationMs: 1,
        },
        {
          pos: pos(23),
          rules: ["approve-small-claims"],
          name: "plain ascii case",
          status: "pass",
          failures: [],
          durationMs: 1,
        },
      ],
    };
    for (const color of [false, true]) {
      const lines = testsText(run, color).split("\n");
      const header = lines.find((l) => l.includes("RESULT")) ?? "";
      const file = columnOf(header, "FILE");
      const caseCol = columnOf(header, "CASE");
      for (const [i, name] of ["小額は承認", "🚀 fast path", "plain ascii case"].entries()) {
        const line = lines[1 + i] ?? "";
        expect(columnOf(line, name), `${color} ${name}`).toBe(caseCol);
        expect(columnOf(line, "rules/"), `${color} ${name}`).toBe(file);
      }
    }
  });
});

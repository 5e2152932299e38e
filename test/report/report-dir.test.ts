/**
 * Report files: `plan --report-dir DIR` against the sandbox writes <rule>.csv and <rule>.json with the plan's groups
 * and rows; a report-only rule set counts as "no changes" for --detailed-exitcode. Plus the CSV and naming rules.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCommand } from "../../src/commands/plan.js";
import type { Plan } from "../../src/plan/types.js";
import { csvCell, reportCsv } from "../../src/render/report/csv.js";
import { reportStems, safeStem } from "../../src/render/report/files.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, tempFiles } from "../rule-tests/helpers.js";

const RULES = `version: 1
rules:
  - name: claims-by-tag
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running] }
    actions:
      - report: { title: Open claims, group_by: tags, columns: [id, name, tags, fields.amount] }
  - name: purchases.by-status
    workflow: 1044
    actions:
      - report: { group_by: status, columns: [id, status] }
`;

let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 5, instances: 250, now: new Date("2026-02-01T00:00:00Z") });
});
afterAll(async () => {
  await sb.close();
});

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += ch;
  }
  return rows;
}

describe("plan --report-dir", () => {
  it("writes each report as <rule>.csv and <rule>.json matching the plan; report-only exits 0 with --detailed-exitcode", async () => {
    const dir = await tempFiles({ "rules/reports.yaml": RULES });
    const out = join(dir, "archive", "2026-02-01");
    const c = captureIO();
    const code = await planCommand(
      {
        paths: [join(dir, "rules")],
        format: "json",
        reportDir: out,
        detailedExitcode: true,
        rules: [],
        quiet: true,
        now: new Date("2026-02-01T00:00:00Z"),
        connection: {
          baseUrl: sb.baseUrl,
          apiKey: "sandbox-admin",
          rateLimitPerMin: 0,
          concurrency: 4,
          timeoutMs: 10_000,
          insecureHttp: false,
        },
      },
      c.io,
    );
    expect(c.err()).toBe("");
    expect(code).toBe(0);
    const plan = JSON.parse(c.out()) as Plan;
    expect(plan.changes).toEqual([]);
    expect(plan.reports.map((r) => r.rule)).toEqual(["claims-by-tag", "purchases.by-status"]);
    expect((await readdir(out)).sort()).toEqual([
      "claims-by-tag.csv",
      "claims-by-tag.json",
      "purchases.by-status.csv",
      "purchases.by-status.json",
    ]);

    for (const report of plan.reports) {
      const json = JSON.parse(await readFile(join(out, `${report.rule}.json`), "utf8")) as Record<string, unknown>;
      expect(json).toMatchObject({
        format_version: 1,
        rule: report.rule,
        title: report.title,
        group_by: report.group_by,
        columns: report.columns,
      });
      expect(json.groups).toEqual(report.groups);
      expect(json.rows).toEqual(report.rows);
      expect(json.total).toBe(report.rows.length);
      expect(report.rows.length).toBeGreaterThan(0);

      const csv = await readFile(join(out, `${report.rule}.csv`), "utf8");
      const rows = parseCsv(csv);
      expect(rows[0]).toEqual(report.columns);
      expect(rows).toHaveLength(report.rows.length + 1);
      expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(report.rows.map((r) => r.id));
    }
    // several tags are written in one cell, joined with "; "
    const claims = plan.reports[0];
    const tagged = claims?.rows.findIndex((r) => Array.isArray(r.tags) && r.tags.length > 1) ?? -1;
    if (tagged >= 0) {
      const rows = parseCsv(await readFile(join(out, "claims-by-tag.csv"), "utf8"));
      expect(rows[tagged + 1]?.[2]).toBe((claims?.rows[tagged]?.tags as string[]).join("; "));
    }
  });
});

describe("CSV and file names", () => {
  it("quotes what needs quoting and defuses spreadsheet formulas in text", () => {
    expect(csvCell('say "hi", twice')).toBe('"say ""hi"", twice"');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell(null)).toBe("");
    expect(csvCell(["a", "+b"])).toBe("a; +b");
    expect(csvCell(["-a"])).toBe("'-a");
    expect(csvCell({ k: 1 })).toBe('"{""k"":1}"');
    const text = reportCsv({
      rule: "r",
      title: "r",
      group_by: "status",
      columns: ["id", "name"],
      groups: [],
      rows: [{ id: 1, name: "x" }],
    });
    expect(text).toBe("id,name\r\n1,x\r\n");
  });

  it("file names are safe and unique, even ignoring case", () => {
    expect(safeStem("claims-by-tag")).toBe("claims-by-tag");
    expect(safeStem("../../etc/passwd")).toBe("etc_passwd");
    expect(safeStem("...")).toBe("report");
    expect(safeStem("Überfällig räume")).toBe("Uberfallig_raume");
    const reports = ["A", "a", "a"].map((rule) => ({
      rule,
      title: rule,
      group_by: "status",
      columns: [],
      groups: [],
      rows: [],
    }));
    expect(reportStems({ reports })).toEqual(["A", "a-2", "a-3"]);
  });
});

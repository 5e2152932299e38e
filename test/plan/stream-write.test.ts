/**
 * The plan written in pieces (src/plan/write.ts): the same bytes as the whole plan stringified at once, a report's
 * rows a batch at a time, the digest the canonical one; and pieces to a slow stream wait for it (backpressure).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { report as reportKind, ReportEntries, type ReportAction, type ReportEntry } from "../../src/actions/index.js";
import { writePieces } from "../../src/log/command-io.js";
import { canonicalJson, planDigest, withDigest } from "../../src/plan/digest.js";
import { isLazyRows } from "../../src/plan/lazy-rows.js";
import type { Plan, PlannedReport } from "../../src/plan/types.js";
import { planFileChunks, planFileText } from "../../src/plan/write.js";
import { reportCsvPieces } from "../../src/render/report/csv.js";
import { reportJson, reportJsonPieces } from "../../src/render/report/json.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { visibleJson } from "../../src/text/visible-json.js";
import { makePlan, tempDir } from "../apply/helpers.js";
import { closeAfterAll } from "../helpers/temp.js";

/** What the writer wrote before it streamed: the signed plan stringified whole, made visible, a newline. */
function wholeText(plan: Plan): string {
  const plain = JSON.parse(JSON.stringify(plan)) as Plan;
  return `${visibleJson(JSON.stringify(withDigest(plain), null, 2))}\n`;
}

/** The digest from the reference canonical form of a plain copy (no streaming, no lazy rows). */
function referenceDigest(plan: Plan): string {
  const plain = JSON.parse(JSON.stringify(plan)) as Plan;
  return `sha256:${createHash("sha256").update(canonicalJson(plain)).digest("hex")}`;
}

const ACTION: ReportAction = {
  kind: "report",
  group_by: "tags",
  columns: ["id", "name", "fields.amount"],
  pos: { file: "rules.yaml", line: 1, col: 1 },
};

/** Entries with the strings a writer could trip on: quotes, newlines, line separators, a would-be marker, no value. */
function entries(n: number): ReportEntry[] {
  const odd = ['say "hi"\n', "\u2028sep\u009b", '\n    "rows": "\u0001flowrules-streamed\u0001"', "日本語 ✓", ""];
  return Array.from({ length: n }, (_, k) => {
    const id = (k * 7919) % n; // out of order: rows come out by id
    return {
      instance_id: id,
      keys: id % 3 === 0 ? ["a", odd[id % odd.length] ?? ""] : [`t${id % 4}`],
      row: { id, name: `${odd[id % odd.length]}#${id}`, "fields.amount": id % 5 === 0 ? null : id / 4 },
    };
  });
}

function reportOf(n: number): PlannedReport {
  return reportKind.build({ name: "big-report", fields: {} }, ACTION, ReportEntries.of(entries(n)));
}

describe("the plan written in pieces", () => {
  it("is the plan stringified at once, byte for byte, with rows made as read; the digest is the canonical one", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 150, seed: 11 }));
    const dir = await tempDir();
    const { plan } = await makePlan(
      sb,
      dir,
      await readFile(new URL("../../rules/expenses.yaml", import.meta.url), "utf8"),
    );
    const big = reportOf(1_234);
    expect(isLazyRows(big.rows)).toBe(true);
    expect(big.rows.map((r) => r.id)).toEqual([...big.rows.map((r) => r.id as number)].sort((a, b) => a - b));
    const empty = reportOf(0);
    const plainRows: PlannedReport = { ...reportOf(501), title: "plain", rows: [...reportOf(501).rows] };
    const many = Array.from({ length: 173 }, (_, i) => ({ ...plan.changes[i % plan.changes.length]!, id: `m:${i}` }));
    const variants: Plan[] = [
      plan,
      { ...plan, reports: [big] },
      { ...plan, changes: many, reports: [empty, big, plainRows, ...plan.reports] },
      { ...plan, changes: [], reports: [] },
    ];
    for (const p of variants) {
      expect(planFileText(p)).toBe(wholeText(p));
      expect(planDigest(p)).toBe(referenceDigest(p));
      // pieces are gathered (a few tens of KB each), never the plan as one string
      const pieces = [...planFileChunks(withDigest(p))];
      if (p.reports.includes(big)) expect(pieces.length).toBeGreaterThan(1);
      for (const piece of pieces.slice(0, -1)) expect(piece.length).toBeLessThan(200_000);
    }
  });

  it("--report-dir files in pieces are the same text as at once", () => {
    const big = reportOf(2_345);
    const info = { created_at: "2026-01-01T00:00:00.000Z", base_url: "http://x/api", flowrules_version: "1" };
    const pieces = [...reportJsonPieces(big, info)];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(reportJson({ ...big, rows: [...big.rows] }, info));
    const csv = [...reportCsvPieces(big)];
    expect(csv.length).toBeGreaterThan(1);
    const lines = csv.join("").split("\r\n");
    expect(lines.length).toBe(2_345 + 2);
    expect(lines[0]).toBe("id,name,fields.amount");
  });

  it("reads like an array and cannot be changed", () => {
    const rows = reportOf(10).rows;
    expect(rows.length).toBe(10);
    expect(Object.keys(rows)).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
    expect([...rows].map((r) => r.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rows[10]).toBeUndefined();
    expect(3 in rows && !(10 in rows)).toBe(true);
    expect(() => rows.push({})).toThrow(/cannot be changed/);
    expect(() => {
      rows[0] = {};
    }).toThrow(/cannot be changed/);
  });
});

/** A stream that takes a piece only after a moment, its buffer a few KB: the writer must wait for it. */
function slowSink(highWaterMark: number): { sink: Writable; text: () => string; mostQueued: () => number } {
  const got: string[] = [];
  let most = 0;
  const sink = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _enc, done) {
      got.push(chunk);
      setImmediate(done);
    },
  });
  const write = sink.write.bind(sink);
  sink.write = ((chunk: string) => {
    const ok = write(chunk);
    most = Math.max(most, sink.writableLength);
    return ok;
  }) as typeof sink.write;
  return { sink, text: () => got.join(""), mostQueued: () => most };
}

describe("pieces to a slow reader", () => {
  it("wait for it to drain: what is queued stays a piece above the stream's buffer, the output whole", async () => {
    const pieces = Array.from({ length: 400 }, (_, i) => `${"x".repeat(1000)}${i}\n`);
    const { sink, text, mostQueued } = slowSink(4096);
    let drains = 0;
    sink.on("drain", () => drains++);
    await writePieces(sink, pieces);
    await new Promise<void>((resolve) => sink.end(resolve));
    expect(text()).toBe(pieces.join(""));
    // without waiting, all 400 KB would be queued at once
    expect(mostQueued()).toBeLessThan(4096 + 1100);
    expect(drains).toBeGreaterThan(50);
  });

  it("the JSON plan's pieces through a slow stream are the plan's bytes", async () => {
    const p = { ...(await planWithReport()), reports: [reportOf(12_000)] };
    const signed = withDigest(p);
    const { sink, text, mostQueued } = slowSink(16 * 1024);
    await writePieces(sink, planFileChunks(signed));
    await new Promise<void>((resolve) => sink.end(resolve));
    expect(text()).toBe(wholeText(p));
    expect(mostQueued()).toBeLessThan(16 * 1024 + 200_000);
    expect(text().length).toBeGreaterThan(3 * (16 * 1024 + 200_000));
  });

  it("stop when the reader went away, instead of waiting for a drain that never comes", async () => {
    const sink = new Writable({ highWaterMark: 16, write: (_c, _e, done) => setImmediate(done) });
    let asked = 0;
    function* endless(): Generator<string> {
      for (;;) {
        asked++;
        if (asked === 5) setImmediate(() => sink.destroy());
        yield "a piece longer than the buffer\n";
      }
    }
    await writePieces(sink, endless());
    expect(sink.destroyed).toBe(true);
    expect(asked).toBeLessThan(10);
  });
});

async function planWithReport(): Promise<Plan> {
  const sb = closeAfterAll(await startSandbox({ port: 0, instances: 60, seed: 3 }));
  const dir = await tempDir();
  return (await makePlan(sb, dir, await readFile(new URL("../../rules/expenses.yaml", import.meta.url), "utf8"))).plan;
}

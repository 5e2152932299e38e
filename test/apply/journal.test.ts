/**
 * The journal decides what a later run does: done → skipped without a request; intent without outcome → decided by
 * reading the instance (took effect → recorded, never re-sent; did not → sent once).
 */
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Journal } from "../../src/apply/journal.js";
import { planDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const line = (e: Record<string, unknown>): string => `${JSON.stringify({ at: new Date().toISOString(), ...e })}\n`;
const start = (plan: Plan): string => line({ event: "start", plan: planDigest(plan), pid: 1, host: hostname() });

/** Sends one planned change straight to the service, as an earlier run's request that reached it would have. */
async function sendDirectly(sb: RunningSandbox, c: Plan["changes"][number]): Promise<void> {
  const res = await fetch(`${sb.baseUrl}${c.request.path}`, {
    method: "POST",
    headers: { authorization: "Api-Key sandbox-admin", "content-type": "application/json" },
    body: JSON.stringify(c.request.body),
  });
  expect(res.status).toBe(200);
}

describe("resuming from the journal", () => {
  it("an intent whose request took effect is decided by reading and not sent again; one that did not is sent once", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 21 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const pick = (k: string) => plan.changes.filter((c) => c.kind === k);
    const tookEffect = [pick("complete_step")[0], pick("save_step")[0], pick("abort")[0]];
    const lost = [pick("complete_step")[1], pick("save_step")[1], pick("abort")[1]];
    for (const c of tookEffect) if (c) await sendDirectly(sb, c);
    const journal = `${file}.journal.jsonl`;
    await writeFile(
      journal,
      start(plan) + [...tookEffect, ...lost].map((c) => line({ event: "intent", change: c?.id, attempt: 1 })).join(""),
    );

    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file] }, io);
    expect(code, io.out()).toBe(2);
    const counts = effectiveMutations(sb);
    for (const c of tookEffect) if (c) expect(counts.get(changeKey(c)), c.id).toBeUndefined();
    for (const c of plan.changes) {
      expect(stateHolds(sb, c), c.id).toBe(true);
      // by id: a plan's changes are made anew each time they are read (src/plan/lazy-changes.ts)
      if (!tookEffect.some((t) => t?.id === c.id)) expect(counts.get(changeKey(c)), c.id).toBe(1);
    }
    const events = (await readFile(journal, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const c of tookEffect) {
      expect(
        events.some((e) => e.event === "done" && e.change === c?.id && e.how === "verified"),
        c?.id,
      ).toBe(true);
    }
    expect(io.err()).toMatch(/resuming: the journal records 1 earlier run/);
  });

  it("a change the journal shows done is skipped without a request, whatever the state", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 22 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const journal = `${file}.journal.jsonl`;
    await writeFile(
      journal,
      start(plan) + plan.changes.map((c) => line({ event: "done", change: c.id, how: "response" })).join(""),
    );
    sb.clearRequests();
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io)).toBe(0);
    expect(sb.requests()).toEqual([]);
    expect(io.out()).toContain(`${plan.changes.length} already applied by an earlier run`);
  });

  it("ignores the runs of another plan in a shared journal, and a line torn by a crash", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 23 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const journal = `${file}.journal.jsonl`;
    const other = line({ event: "start", plan: `sha256:${"0".repeat(64)}`, pid: 1, host: hostname() });
    await writeFile(
      journal,
      other + plan.changes.map((c) => line({ event: "done", change: c.id, how: "response" })).join(""),
    );
    await appendFile(journal, '{"event":"intent","chan');
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io)).toBe(2);
    const counts = effectiveMutations(sb);
    for (const c of plan.changes) expect(counts.get(changeKey(c)), c.id).toBe(1);
    expect(io.err()).toMatch(/ignored 1 unreadable line/);
    // our lines start on a fresh line after the torn one: it stays the only unreadable line
    const lines = (await readFile(journal, "utf8")).trim().split("\n");
    const unreadable = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(unreadable).toEqual(['{"event":"intent","chan']);
  });
});

describe("the journal's clock", () => {
  it("stamps every line with the apply's clock, not the machine's", async () => {
    const file = join(await tempDir(), "clock.journal.jsonl");
    const journal = Journal.open(
      file,
      "sha256:clock",
      () => undefined,
      () => Date.parse("2031-05-01T10:00:00Z"),
    );
    journal.start({ flowrules_version: "test" });
    journal.append({ event: "intent", change: "r:abort:1", attempt: 1 });
    journal.close();
    const stamps = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { at: string }).at);
    expect(stamps).toEqual(["2031-05-01T10:00:00.000Z", "2031-05-01T10:00:00.000Z"]);
  });
});

describe("a journal written before batches were named generically", () => {
  it("reads its not_aborted lines as not_acted: the abort is not sent again, and the finish line is no torn line", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 24 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const abort = plan.changes.find((c) => c.kind === "abort");
    if (!abort) throw new Error("the mixed rules plan no abort");
    // lines exactly as flowrules wrote them then (test/fixtures/journals/), for this plan and one of its aborts
    const old = (await readFile(new URL("../fixtures/journals/not-aborted.jsonl", import.meta.url), "utf8"))
      .replaceAll("PLAN_DIGEST", planDigest(plan))
      .replaceAll("CHANGE_ID", abort.id);
    const journal = `${file}.journal.jsonl`;
    await writeFile(journal, old);
    sb.clearRequests();
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file], format: "json" }, io)).toBe(1);
    const sent = sb
      .requests()
      .filter((r) => r.path.endsWith("/instances/bulk/abort"))
      .flatMap((r) => (r.body as { ids: number[] }).ids);
    expect(sent).not.toContain(abort.instance_id);
    const doc = JSON.parse(io.out()) as {
      summary: Record<string, number>;
      changes: Array<{ id: string; status: string; reason?: string }>;
    };
    expect(doc.changes.find((c) => c.id === abort.id)).toMatchObject({
      status: "not_acted",
      reason: "completed (at 2026-03-01T17:00:00Z) (earlier run)",
    });
    expect(doc.summary).toMatchObject({ not_acted: 1, not_aborted: 1 });
    expect(io.err()).not.toMatch(/unreadable line/);
    // this run writes the new word
    const finish = (await readFile(journal, "utf8")).trim().split("\n").at(-1) ?? "";
    expect(JSON.parse(finish)).toMatchObject({ event: "finish", not_acted: 1 });
  });
});

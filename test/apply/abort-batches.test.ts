/** Aborts go in bulk batches of --batch-size; ids the service does not return are reported with the reason read. */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { abortChange, captureIO, connection, handPlan, runApply, tempDir } from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe("bulk aborts", () => {
  it("sends batches of --batch-size and reports ids not returned, with the reason found by reading", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 9 });
    const dir = await tempDir();
    const all = sb.store.list(1043);
    const running = all.filter((i) => i.abortedTime === null && i.completedTime === null).slice(0, 10);
    const aborted = all.find((i) => i.abortedTime !== null);
    const completed = all.find((i) => i.completedTime !== null && i.abortedTime === null);
    if (!aborted || !completed || running.length < 10) throw new Error("demo data lacks a case");
    // the already ended ones were last updated long before the plan, so the staleness list does not catch them:
    // they reach the bulk abort, which does not return them
    const changes = [...running.slice(0, 5), aborted, ...running.slice(5), completed].map((i) =>
      abortChange("stop", i),
    );
    const { file } = await handPlan(sb, dir, changes);

    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file], batchSize: 4 }, io);
    expect(code).toBe(1);

    const bulk = sb.requests().filter((r) => r.method === "POST" && r.path.endsWith("/instances/bulk/abort"));
    expect(bulk.length).toBe(Math.ceil(changes.length / 4));
    const sent = bulk.flatMap((r) => (r.body as { ids: number[] }).ids);
    expect(bulk.every((r) => (r.body as { ids: number[] }).ids.length <= 4)).toBe(true);
    expect(sent.sort()).toEqual(changes.map((c) => c.instance_id).sort());
    for (const i of running) expect(sb.store.status(i.id)).toBe("aborted");

    const out = io.out();
    expect(out).toMatch(/10 changes applied, 2 not aborted/);
    expect(out).toContain(`instance ${aborted.id}, abort: already aborted (at `);
    expect(out).toContain(`instance ${completed.id}, abort: completed (at `);
    const journal = await readFile(`${file}.journal.jsonl`, "utf8");
    expect(journal.split("\n").filter((l) => l.includes('"event":"not_acted"')).length).toBe(2);
  });

  it("says when the key may not abort, or cannot see the instance", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 9 });
    const dir = await tempDir();
    const running = sb.store.list(1043).filter((i) => i.abortedTime === null && i.completedTime === null);
    // sandbox-member owns step 20121 of workflow 1043: it sees instances that reached it, and may abort none
    const seen = running.find((i) => i.reachedStepIds.includes(20121));
    const unseen = running.find((i) => !i.reachedStepIds.includes(20121));
    if (!seen || !unseen) throw new Error("demo data lacks a case");
    const { file } = await handPlan(sb, dir, [abortChange("stop", seen), abortChange("stop", unseen)]);
    const io = captureIO();
    const code = await runApply(
      sb,
      dir,
      { paths: [file], connection: connection(sb, { apiKey: "sandbox-member" }) },
      io,
    );
    expect(code).toBe(1);
    expect(io.out()).toContain(`instance ${seen.id}, abort: still running: the service did not abort it`);
    expect(io.out()).toContain(`instance ${unseen.id}, abort: not found or not visible to this API key`);
    expect(sb.store.status(seen.id)).toBe("running");
    expect(io.out() + io.err()).not.toContain("sandbox-member");
  });
});

/**
 * Issue 28, points 5 and 6: answers that claim something the data does not back. A check list that ignores its
 * `status=aborted` filter never makes a running instance count as aborted; a record read for instance N that carries
 * another id is an error for N (no change planned without its record), and the others are planned as usual.
 */
import { readFile, rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { planCommand } from "../../src/commands/plan.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  ABORT_RULES,
  captureIO,
  connection,
  makePlan,
  runApply,
  stateHolds,
  tempDir,
  writeRules,
} from "../apply/helpers.js";
import { startHostileProxy, type Answer, type Exchange, type HostileProxy } from "./hostile-proxy.js";

let sb: RunningSandbox | undefined;
let proxy: HostileProxy | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await proxy?.close();
  await sb?.close();
  proxy = undefined;
  sb = undefined;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setUp(seed: number): Promise<{ s: RunningSandbox; p: HostileProxy; via: RunningSandbox; dir: string }> {
  const s = (sb = await startSandbox({ port: 0, instances: 120, seed }));
  const p = (proxy = await startHostileProxy(s.origin));
  const dir = await tempDir();
  dirs.push(dir);
  return { s, p, via: { ...s, baseUrl: p.baseUrl }, dir };
}

const json = (body: unknown): Answer => ({
  status: 200,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const isBulkAbort = (ex: Exchange): boolean => ex.method === "POST" && ex.path.endsWith("/instances/bulk/abort");

describe("a bulk abort whose check list ignores its filter", () => {
  it("does not count running instances as aborted: nothing is marked done, the aborts fail after their re-sends; exit 1", async () => {
    const { s, p, via, dir } = await setUp(285);
    const { file, plan } = await makePlan(via, dir, ABORT_RULES);
    expect(plan.changes.length).toBeGreaterThan(3);
    const ids = plan.changes.map((c) => c.instance_id);
    p.setRule((ex) => {
      // the abort never reaches the service and its answer is unreadable…
      if (isBulkAbort(ex)) return { forward: false, answer: json({ ids: "all of them" }) };
      // …and the list meant to check it lists every planned instance, still running, as if the filter held
      if (ex.method === "GET" && ex.query.includes("aborted_time_after")) {
        return {
          forward: false,
          answer: json({
            count: ids.length,
            next: null,
            previous: null,
            results: ids.map((id) => ({ id, name: `i${id}`, status: "running" })),
          }),
        };
      }
      return {};
    });
    const io = captureIO();
    expect(await runApply(via, dir, { paths: [file], batchSize: 100 }, io)).toBe(1);
    const lines = (await readFile(`${file}.journal.jsonl`, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string });
    expect(lines.filter((l) => l.event === "done")).toEqual([]);
    expect(lines.filter((l) => l.event === "failed")).toHaveLength(plan.changes.length);
    expect(io.out()).toMatch(/bulk abort outcome unknown 3 times .*not aborted as of the last check/);
    for (const c of plan.changes) expect(stateHolds(s, c)).toBe(false);
  });
});

describe("a record read for one instance that carries another id", () => {
  const RULES = `version: 1
rules:
  - name: abort-onboardings
    workflow: 1043
    select: { status: [running] }
    when: $count(tags) >= 0
    actions: [abort]
`;

  it("is an error for that instance: no change without its record, the others planned with their preconditions", async () => {
    const { s, p, dir } = await setUp(286);
    const running = s.store.list(1043).filter((i) => s.store.status(i.id) === "running");
    expect(running.length).toBeGreaterThan(3);
    const victim = running[1]?.id ?? -1;
    p.setRule((ex) => {
      if (ex.method === "GET" && ex.path === `/instances/${victim}/`) {
        return {
          answer: (up: Answer) => ({
            ...up,
            body: JSON.stringify({ ...(JSON.parse(up.body) as object), id: victim + 1 }),
          }),
        };
      }
      return {};
    });
    const rules = await writeRules(dir, RULES);
    const io = captureIO();
    const code = await planCommand(
      {
        paths: [rules],
        out: `${dir}/plan.json`,
        format: "json",
        quiet: true,
        detailedExitcode: false,
        rules: [],
        connection: connection({ baseUrl: p.baseUrl }),
      },
      io,
    );
    expect(code).toBe(1);
    const plan = JSON.parse(await readFile(`${dir}/plan.json`, "utf8")) as Plan;
    expect(plan.changes.map((c) => c.instance_id)).not.toContain(victim);
    const err = plan.errors.find((e) => e.instance_id === victim);
    expect(err?.message).toBe(
      `rule "abort-onboardings", instance ${victim}: reading instance ${victim}: the service answered with the record of instance ${victim + 1}`,
    );
    expect(plan.errors).toHaveLength(1);
    expect(plan.changes).toHaveLength(running.length - 1);
    for (const c of plan.changes) expect(c.precondition?.last_updated_time, c.id).toBeTruthy();
  });
});

describe("a listing that holds an id the service's paths cannot carry", () => {
  it("is refused with the answer (the rule fails, one error), never planned and refused at apply", async () => {
    const { p, dir } = await setUp(2814);
    p.setRule((ex) =>
      ex.method === "GET" && /\/processes\/1043\/instances\/$/.test(ex.path)
        ? { answer: (up: Answer) => ({ ...up, body: up.body.replace(/"id":(\d+)/, '"id":-$1') }) }
        : {},
    );
    const rules = await writeRules(dir, ABORT_RULES);
    const code = await planCommand(
      {
        paths: [rules],
        out: `${dir}/plan.json`,
        format: "json",
        quiet: true,
        detailedExitcode: false,
        rules: [],
        connection: connection({ baseUrl: p.baseUrl }),
      },
      captureIO(),
    );
    expect(code).toBe(1);
    const plan = JSON.parse(await readFile(`${dir}/plan.json`, "utf8")) as Plan;
    expect(plan.changes).toEqual([]);
    expect(plan.errors).toHaveLength(1);
    expect(plan.errors[0]?.message).toMatch(/listing instances of workflow 1043, page 1: .*id/);
  });
});

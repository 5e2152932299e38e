/**
 * --shard i/n: parsing, and the property that matters — the n shards' plans are disjoint and together equal the
 * unsharded plan (same changes, same reports), planned against the sandbox. Then the CLI flag on plan and apply.
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inShard, parseShard, shardOfPlan } from "../../src/plan/shard.js";
import type { ConnectionSettings } from "../../src/model/settings.js";
import { planCommand } from "../../src/commands/plan.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { memoryIO } from "../helpers/io.js";
import { tempDir } from "../helpers/temp.js";

const STARTER = resolve("rules");

describe("parseShard", () => {
  it("accepts i/n with 0 ≤ i < n", () => {
    expect(parseShard("0/1")).toEqual({ index: 0, count: 1 });
    expect(parseShard(" 2/3 ")).toEqual({ index: 2, count: 3 });
  });
  it.each(["3/3", "1/0", "-1/2", "1", "a/b", "1/2/3", "", "1.5/3", "0/10001"])(
    "rejects %j with a message naming the form",
    (raw) => {
      expect(() => parseShard(raw)).toThrow(/--shard/);
    },
  );
  it("splits ids deterministically, each id in exactly one shard", () => {
    for (let id = 0; id < 50; id++) {
      expect([0, 1, 2].filter((i) => inShard(id, { index: i, count: 3 }))).toEqual([id % 3]);
    }
    const plan = { changes: [{ instance_id: 1 }, { instance_id: 2 }, { instance_id: 4 }], other: "kept" };
    expect(shardOfPlan(plan, { index: 0, count: 2 })).toEqual({
      changes: [{ instance_id: 2 }, { instance_id: 4 }],
      other: "kept",
    });
    expect(shardOfPlan(plan, undefined)).toBe(plan);
  });
});

describe("sharded plans against the sandbox", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 400 });
  });
  afterAll(async () => {
    await sb.close();
  });
  const connection = (): ConnectionSettings => ({
    baseUrl: sb.baseUrl,
    apiKey: "sandbox-admin",
    rateLimitPerMin: 0,
    concurrency: 4,
    timeoutMs: 30_000,
    insecureHttp: false,
  });
  // one instant for every plan, so relative dates and $now() values agree exactly
  const now = new Date();

  async function plan(shard?: { index: number; count: number }): Promise<Plan> {
    const io = memoryIO();
    const code = await planCommand(
      {
        paths: [STARTER],
        format: "json",
        detailedExitcode: false,
        rules: [],
        quiet: true,
        connection: connection(),
        now,
        ...(shard ? { shard } : {}),
      },
      io,
    );
    expect(code, io.err()).toBe(0);
    return JSON.parse(io.out()) as Plan;
  }

  const byId = (changes: PlannedChange[]): PlannedChange[] =>
    [...changes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  it("the union of the shards' plans is the unsharded plan: same changes, same report groups, no overlap", async () => {
    const whole = await plan();
    expect(whole.changes.length).toBeGreaterThan(3);
    for (const count of [2, 3]) {
      const shards = [];
      for (let index = 0; index < count; index++) shards.push(await plan({ index, count }));
      const union = shards.flatMap((p) => p.changes);
      // disjoint: no change id twice, and each shard holds only its own instances
      expect(new Set(union.map((c) => c.id)).size).toBe(union.length);
      shards.forEach((p, index) => expect(p.changes.every((c) => c.instance_id % count === index)).toBe(true));
      // equal: the very same change objects (request, before, after, precondition)
      expect(byId(union)).toEqual(byId(whole.changes));
      // reports: every group's instances, merged over the shards
      for (const report of whole.reports) {
        for (const group of report.groups) {
          const merged = shards.flatMap(
            (p) =>
              p.reports.find((r) => r.rule === report.rule)?.groups.find((g) => g.key === group.key)?.instance_ids ??
              [],
          );
          expect([...merged].sort((a, b) => a - b)).toEqual([...group.instance_ids].sort((a, b) => a - b));
        }
      }
      // per rule: the selections and matches add up
      for (const r of whole.rules) {
        const parts = shards.map((p) => p.rules.find((x) => x.name === r.name));
        expect(parts.reduce((n, x) => n + (x?.selected ?? 0), 0)).toBe(r.selected);
        expect(parts.reduce((n, x) => n + (x?.matched ?? 0), 0)).toBe(r.matched);
      }
    }
  });

  it("plan --shard on the CLI keeps only its instances; a bad value is one clear line", async () => {
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
    const r = await runCli(["plan", "--shard", "1/2", "--format", "json", "-q"], env);
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout) as Plan;
    expect(p.changes.length).toBeGreaterThan(0);
    expect(p.changes.every((c) => c.instance_id % 2 === 1)).toBe(true);
    const bad = await runCli(["plan", "--shard", "2/2"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^flowrules: --shard 2\/2: INDEX must be below COUNT/m);
  });
});

describe("apply --shard and --detailed-exitcode (CLI against the sandbox)", () => {
  let sb: RunningSandbox;
  let dir: string;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0 });
    dir = await tempDir("flowrules-shard-apply-");
  });
  afterAll(async () => {
    await sb.close();
  });
  const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });
  /** instance ids the service was asked to change */
  const mutated = (): number[] =>
    sb
      .requests()
      .filter((r) => r.method === "POST")
      .flatMap((r) => {
        const step = /\/instances\/(\d+)\/complete_step\/$/.exec(r.path);
        if (step) return [Number(step[1])];
        const body = r.body as { ids?: number[] } | null;
        return Array.isArray(body?.ids) ? body.ids : [];
      });

  it("two shards apply one saved plan without overlap, exit 2 when they applied, 0 when nothing was left", async () => {
    const planFile = join(dir, "plan.json");
    const planned = await runCli(["plan", STARTER, "--out", planFile, "-q", "--detailed-exitcode"], env(), {
      cwd: dir,
    });
    expect(planned.code, planned.stderr).toBe(2);
    const plan = JSON.parse(await readFile(planFile, "utf8")) as Plan;
    const ids = (i: number): number[] =>
      [...new Set(plan.changes.filter((c) => c.instance_id % 2 === i).map((c) => c.instance_id))].sort((a, b) => a - b);
    expect(ids(0).length).toBeGreaterThan(0);
    expect(ids(1).length).toBeGreaterThan(0);

    for (const i of [0, 1]) {
      sb.clearRequests();
      const r = await runCli(["apply", planFile, "--shard", `${i}/2`, "--detailed-exitcode", "-q"], env(), {
        cwd: dir,
      });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect([...new Set(mutated())].sort((a, b) => a - b)).toEqual(ids(i));
    }
    // the whole plan again: everything is in the journal, nothing is sent, exit 0
    sb.clearRequests();
    const again = await runCli(["apply", planFile, "--detailed-exitcode", "-q"], env(), { cwd: dir });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(mutated()).toEqual([]);
  });

  it("apply rules --auto-approve --shard plans and applies only its instances", async () => {
    const fresh = await startSandbox({ port: 0 });
    const wd = await tempDir("flowrules-shard-auto-");
    try {
      const e = { FLOWRULES_BASE_URL: fresh.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
      const r = await runCli(["apply", STARTER, "--auto-approve", "--shard", "0/3", "--detailed-exitcode", "-q"], e, {
        cwd: wd,
      });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const posts = fresh.requests().filter((q) => q.method === "POST");
      expect(posts.length).toBeGreaterThan(0);
      for (const q of posts) {
        const step = /\/instances\/(\d+)\//.exec(q.path);
        const touched = step ? [Number(step[1])] : ((q.body as { ids?: number[] }).ids ?? []);
        for (const id of touched) expect(id % 3).toBe(0);
      }
    } finally {
      await fresh.close();
    }
  });
});

/**
 * Operating rules in production, against the sandbox over HTTP: audit changes are planned and never sent, exclusions
 * and the opt-out tag remove exactly those instances (and are counted), a rule outside its window makes no request,
 * and webhooks hear about plan and apply without ever changing the exit code or seeing the API key.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { planCommand } from "../../src/commands/plan.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { planDigest } from "../../src/plan/digest.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, connection, makePlan, readJson, runApply, tempDir, writeRules } from "../apply/helpers.js";

const NOW = new Date("2026-11-04T12:00:00.000Z"); // a Wednesday
let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 300, seed: 5, now: NOW });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.clearRequests());

const running = (wf: number): number[] =>
  sb.store
    .list(wf)
    .filter((i) => i.completedTime === null && i.abortedTime === null)
    .map((i) => i.id);

const posts = (): number => sb.requests().filter((r) => r.method === "POST").length;

const abortRule = (extra: string, name = "abort-onboardings"): string => `
version: 1
rules:
  - name: ${name}
    workflow: 1043
    select: { status: [running] }
${extra}
    actions: [abort]
`;

describe("mode: audit", () => {
  it("plans the rule's changes marked audit, and apply (saved plan and --auto-approve) sends none of them", async () => {
    const dir = await tempDir();
    const want = running(1043);
    expect(want.length).toBeGreaterThan(2);
    const { file, plan } = await makePlan(sb, dir, abortRule("    mode: audit"));
    expect(plan.changes.map((c) => c.instance_id).sort((a, b) => a - b)).toEqual(want);
    expect(plan.changes.every((c) => c.audit === true)).toBe(true);
    const saved = await readJson(file);
    expect((saved.changes as Array<{ audit?: boolean }>).every((c) => c.audit === true)).toBe(true);

    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file] }, io);
    expect(code).toBe(0);
    expect(posts()).toBe(0);
    expect(io.out()).toMatch(new RegExp(`Audit: ${want.length} changes of rules in audit mode not sent`));
    expect(running(1043)).toEqual(want);

    sb.clearRequests();
    const rules = await writeRules(dir, abortRule("    mode: audit"));
    const io2 = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], autoApprove: true }, io2)).toBe(0);
    expect(posts()).toBe(0);
    expect(io2.out()).toContain(`${want.length} in audit, never sent`);
  });

  it("the digest covers the audit mark: a saved plan flipped to enforce is refused", async () => {
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, abortRule("    mode: audit"));
    const raw = await readJson(file);
    const changes = raw.changes as Array<Record<string, unknown>>;
    for (const c of changes) delete c.audit;
    const { writeFile } = await import("node:fs/promises");
    await writeFile(file, JSON.stringify(raw));
    sb.clearRequests();
    const io = captureIO();
    await expect(runApply(sb, dir, { paths: [file] }, io)).rejects.toThrow(/digest/i);
    expect(posts()).toBe(0);
    // and an untouched audit plan reads back with its mark and a matching digest
    const again = await makePlan(sb, dir, abortRule("    mode: audit"));
    const read = await loadPlanFile(again.file, sb.baseUrl);
    expect(planDigest(read.plan)).toBe(read.digest);
  });
});

describe("exclusions and the opt-out tag", () => {
  it("remove exactly the listed ids and the tagged instances, count them, and list by tag once instead of reading records", async () => {
    const ids = running(1043);
    const [byId, byTag, optedOut] = ids;
    if (byId === undefined || byTag === undefined || optedOut === undefined) throw new Error("too few instances");
    sb.store.update(byTag, (i) => void (i.tags = [...i.tags.filter((t) => t !== "legal-hold"), "legal-hold"]));
    sb.store.update(optedOut, (i) => void (i.tags = [...i.tags, "no-automation"]));
    for (const id of ids.slice(3))
      sb.store.update(id, (i) => void (i.tags = i.tags.filter((t) => t !== "legal-hold" && t !== "no-automation")));
    const dir = await tempDir();
    const file = await writeRules(dir, abortRule(`    exclude: { instance_ids: [${byId}], tags: [legal-hold] }`));
    const { loadRules } = await import("../../src/rules/index.js");
    const loaded = await loadRules([file]);
    const { planRuleSet } = await import("../../src/commands/plan.js");
    sb.clearRequests();
    const plan = await planRuleSet(loaded.ruleSet!, connection(sb), captureIO(), {
      quiet: true,
      optOutTag: "no-automation",
    });
    expect(plan.changes.map((c) => c.instance_id).sort((a, b) => a - b)).toEqual(ids.slice(3));
    const rule = plan.rules[0];
    expect(rule?.excluded).toBe(3);
    expect(rule?.selected).toBe(ids.length);
    expect(rule?.matched).toBe(ids.length - 3);
    // no record read: one listing of the selection plus one listing by the excluded tags
    const log = sb.requests();
    expect(log.filter((r) => /^\/api\/instances\/\d+\/$/.test(r.path))).toHaveLength(0);
    const byTags = log.filter((r) => r.query.tags !== undefined);
    expect(byTags).toHaveLength(1);
    expect(String(byTags[0]?.query.tags).split(",").sort()).toEqual(["legal-hold", "no-automation"]);

    // the opt-out turned off: the opted-out instance is planned again
    const off = await planRuleSet(loaded.ruleSet!, connection(sb), captureIO(), { quiet: true });
    expect(off.changes.map((c) => c.instance_id)).toContain(optedOut);
    expect(off.rules[0]?.excluded).toBe(2);
  });

  it("explain names the exclusion that applied", async () => {
    const [id] = running(1043);
    if (id === undefined) throw new Error("no instance");
    sb.store.update(id, (i) => void (i.tags = [...i.tags, "no-automation"]));
    const dir = await tempDir();
    const file = await writeRules(dir, abortRule(""));
    const { explainCommand } = await import("../../src/commands/explain.js");
    const io = captureIO();
    const code = await explainCommand(
      {
        paths: [file],
        instance: id,
        rules: [],
        format: "json",
        connection: connection(sb),
        now: NOW,
        optOutTag: "no-automation",
      },
      io,
    );
    expect(code).toBe(0);
    const out = JSON.parse(io.out()) as { rules: Array<{ matched: boolean; excluded?: string; changes: unknown[] }> };
    expect(out.rules[0]?.matched).toBe(false);
    expect(out.rules[0]?.excluded).toMatch(/opt-out tag "no-automation"/);
    sb.store.update(id, (i) => void (i.tags = i.tags.filter((t) => t !== "no-automation")));
  });
});

describe("active windows", () => {
  it("a rule outside its window makes no request at all and is inactive with the reason and next activation", async () => {
    const dir = await tempDir();
    // NOW is a Wednesday 12:00 UTC = 13:00 in Berlin; the rule runs on weekends only
    const file = await writeRules(
      dir,
      abortRule('    active: { days: [sat, sun], hours: "08:00-18:00", timezone: Europe/Berlin }'),
    );
    const io = captureIO();
    sb.clearRequests();
    const code = await planCommand(
      {
        paths: [file],
        format: "json",
        detailedExitcode: true,
        rules: [],
        quiet: true,
        connection: connection(sb),
        now: NOW,
        optOutTag: "no-automation",
      },
      io,
    );
    expect(sb.requests()).toHaveLength(0);
    expect(code).toBe(0);
    const plan = JSON.parse(io.out()) as {
      rules: Array<{ status: string; reason?: string; next_active_at?: string }>;
      changes: unknown[];
    };
    expect(plan.changes).toEqual([]);
    expect(plan.rules[0]?.status).toBe("inactive");
    expect(plan.rules[0]?.reason).toMatch(/sat, sun/);
    // Saturday 2026-11-07 08:00 in Berlin (CET, UTC+1)
    expect(Date.parse(plan.rules[0]?.next_active_at ?? "")).toBe(Date.parse("2026-11-07T07:00:00Z"));
  });

  it("inside its window the rule plans as usual", async () => {
    const dir = await tempDir();
    const file = await writeRules(
      dir,
      abortRule(
        '    active: { from: 2026-11-01, until: 2026-12-01, days: [wed], hours: "12:30-14:00", timezone: Europe/Berlin }',
      ),
    );
    const io = captureIO();
    await planCommand(
      {
        paths: [file],
        format: "json",
        detailedExitcode: false,
        rules: [],
        quiet: true,
        connection: connection(sb),
        now: NOW,
      },
      io,
    );
    const plan = JSON.parse(io.out()) as { rules: Array<{ status: string }>; changes: unknown[] };
    expect(plan.rules[0]?.status).toBe("ok");
    expect(plan.changes.length).toBe(running(1043).length);
  });
});

interface Received {
  body: Record<string, unknown>;
  headers: IncomingMessage["headers"];
}

/** A webhook on 127.0.0.1: answers `status`, or never answers when `hang`. */
async function receiver(
  behaviour: { status?: number; hang?: boolean } = {},
): Promise<{ url: string; got: Received[]; server: Server; close: () => Promise<void> }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      got.push({ body: JSON.parse(text) as Record<string, unknown>, headers: req.headers });
      if (behaviour.hang) return;
      res.writeHead(behaviour.status ?? 200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/T000/B000/secret`,
    got,
    server,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("notifications", () => {
  it("plan and apply POST one summary each with the right counts, the rules and a text; never the API key", async () => {
    const hook = await receiver();
    try {
      const dir = await tempDir();
      const want = running(1043).length;
      const file = await writeRules(
        dir,
        abortRule("") + abortRule("    mode: audit", "watch-onboardings").replace("version: 1\nrules:\n", ""),
      );
      const notify = { urls: [new URL(hook.url)] };
      const planIo = captureIO();
      const out = join(dir, "plan.json");
      const code = await planCommand(
        // planned at the sandbox's clock (not the pinned NOW): instances retagged above changed after NOW
        {
          paths: [file],
          format: "text",
          out,
          detailedExitcode: true,
          rules: [],
          quiet: true,
          connection: connection(sb),
          notify,
        },
        planIo,
      );
      expect(code).toBe(2);
      expect(hook.got).toHaveLength(1);
      const p = hook.got[0]?.body ?? {};
      expect(p.event).toBe("plan.finished");
      expect(p.base_url).toBe(sb.baseUrl);
      expect(Date.parse(String(p.finished_at))).toBeGreaterThanOrEqual(Date.parse(String(p.started_at)));
      const summary = p.summary as Record<string, unknown>;
      expect(summary.audit).toBe(want);
      expect(summary.changes).toBe(2 * want);
      expect((p.rules as Array<{ name: string }>).map((r) => r.name)).toEqual([
        "abort-onboardings",
        "watch-onboardings",
      ]);
      expect(String(p.text)).toContain("abort-onboardings");
      expect(String(p.text)).toContain(`Plan: ${out}`);

      const applyIo = captureIO();
      const applied = await runApply(sb, dir, { paths: [out], notify }, applyIo);
      expect(applied).toBe(2);
      expect(hook.got).toHaveLength(2);
      const a = hook.got[1]?.body ?? {};
      expect(a.event).toBe("apply.finished");
      const s = a.summary as Record<string, unknown>;
      expect(s).toMatchObject({ applied: want, stale: 0, failed: 0, deferred: 0, audit: want });
      expect((s.by_kind as Record<string, number>).abort).toBe(want);
      expect(String(a.text)).toMatch(/Journal: .*journal\.jsonl/);
      for (const r of hook.got) {
        expect(JSON.stringify(r.body)).not.toContain("sandbox-admin");
        expect(JSON.stringify(r.headers)).not.toContain("sandbox-admin");
      }
    } finally {
      await hook.close();
    }
  });

  it("a failing or hanging receiver is retried, cut off, warned about, and leaves the exit code alone", async () => {
    const failing = await receiver({ status: 500 });
    const hanging = await receiver({ hang: true });
    try {
      const dir = await tempDir();
      const file = await writeRules(dir, abortRule("    mode: audit"));
      const io = captureIO();
      const code = await planCommand(
        {
          paths: [file],
          format: "json",
          detailedExitcode: false,
          rules: [],
          quiet: true,
          connection: connection(sb),
          now: NOW,
          notify: { urls: [new URL(failing.url), new URL(hanging.url)], options: { timeoutMs: 300, backoffMs: 10 } },
        },
        io,
      );
      expect(code).toBe(0);
      expect(failing.got.length).toBe(3);
      expect(hanging.got.length).toBeGreaterThanOrEqual(1);
      const warnings = io
        .err()
        .split("\n")
        .filter((l) => l.includes("warning: notification"));
      expect(warnings).toHaveLength(2);
      expect(warnings.join("\n")).toMatch(/answered 500/);
      expect(warnings.join("\n")).toMatch(/no answer within/);
      // the webhook's path holds its secret: never repeated in messages
      expect(io.err()).not.toContain("secret");
    } finally {
      await failing.close();
      await hanging.close();
    }
  });
});

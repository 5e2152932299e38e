/**
 * The API key never leaves the request header. With a unique key, every verb runs — on success and on every error path
 * (401, a server echoing the key whole or in part, 503 until retries run out, outcomes unknown, a bad plan file, a held
 * lock, a key put in the wrong variable, FLOWRULES_DEBUG, --log-format json) — and no piece of 8 or more characters of
 * the key appears in stdout, stderr, plan files, journals, report files, JUnit files or lock files.
 *
 * And plain http:// to a host that is not loopback is refused before any socket opens: checked in-process (the
 * client's constructor, with net patched) and in the CLI (a preload reports any connection attempt).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, InsecureUrlError } from "../../src/api/index.js";
import { connectionSettings } from "../../src/cli/settings.js";
import { applyCommand } from "../../src/commands/apply.js";
import { planCommand } from "../../src/commands/plan.js";
import { acquireLock } from "../../src/fs/lock.js";
import { planDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, MIXED_RULES, tempDir } from "../apply/helpers.js";
import { CLI, runCli, type CliResult } from "../helpers/cli.js";
import { startHostileProxy, type Answer, type HostileProxy } from "./hostile-proxy.js";

const KEY = `k-${randomUUID()}`;

/** Every piece of the key that must not appear anywhere. */
function leaks(text: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 8 <= KEY.length; i++) if (text.includes(KEY.slice(i, i + 8))) found.add(KEY.slice(i, i + 8));
  return [...found];
}

const RULES = `${MIXED_RULES}  - name: expense-report
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: tags, columns: [name, status], title: Expense claims }
`;

let sb: RunningSandbox;
let proxy: HostileProxy;
let dir: string;
let mode: "ok" | "deny" | "echo" | "html-echo" | "unavailable" | "unknown" = "ok";

const json = (body: unknown, status: number, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 150, seed: 21 });
  proxy = await startHostileProxy(sb.origin, { keys: { [KEY]: "sandbox-admin" } });
  proxy.setRule((ex) => {
    switch (mode) {
      case "ok":
        return {};
      case "deny":
        return { forward: false, answer: json({ detail: "Invalid API key." }, 401) };
      case "echo":
        // a server that quotes the key it was sent, whole and in pieces
        return {
          forward: false,
          answer: json(
            { detail: `Invalid API key ${KEY} (known prefix ${KEY.slice(0, 14)}…, suffix …${KEY.slice(-12)})` },
            401,
          ),
        };
      case "html-echo":
        return {
          forward: false,
          answer: {
            status: 500,
            headers: { "content-type": "text/html" },
            body: `<html><head><title>Error for ${KEY}</title></head><body>Authorization: Api-Key ${KEY}</body></html>`,
          },
        };
      case "unavailable":
        return {
          forward: false,
          answer: json({ detail: `overloaded (${KEY.slice(2, 22)})` }, 503, { "retry-after": "0" }),
        };
      case "unknown":
        if (ex.method === "POST") return { destroy: true };
        // and what would decide them cannot be read
        if (ex.method === "GET" && (/^\/instances\/\d+\/$/.test(ex.path) || ex.query.includes("aborted_time_after"))) {
          return { forward: false, answer: json({ detail: `key ${KEY} is broken` }, 500) };
        }
        return {};
    }
  });
  dir = await tempDir();
  await mkdir(join(dir, "rules"));
  await writeFile(join(dir, "rules", "rules.yaml"), RULES);
});
afterAll(async () => {
  await proxy.close();
  await sb.close();
});

const outputs: Array<{ what: string; text: string }> = [];
async function run(what: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const r = await runCli(
    args,
    { FLOWRULES_BASE_URL: proxy.baseUrl, FLOWRULES_API_KEY: KEY, FLOWRULES_RATE_LIMIT: "0", ...env },
    { cwd: dir },
  );
  outputs.push({ what: `${what} (stdout)`, text: r.stdout }, { what: `${what} (stderr)`, text: r.stderr });
  return r;
}

async function filesBelow(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true })) {
    const p = join(root, e.name);
    if (e.isDirectory()) out.push(...(await filesBelow(p)));
    else out.push(p);
  }
  return out;
}

describe("the API key never appears", () => {
  it("in any output or file of any verb, on success and on every error path", async () => {
    // success
    mode = "ok";
    expect((await run("validate", ["validate", "rules"])).code).toBe(0);
    expect((await run("validate json", ["validate", "rules", "--format", "json"])).code).toBe(0);
    // each apply below gets its own rules, so that each has work: saved plan, auto-approve, unknown outcomes, the lock
    const planned = await run("plan text", [
      "plan",
      "rules",
      "--rule",
      "approve-expenses",
      "--rule",
      "expense-report",
      "--out",
      "plan.json",
      "--report-dir",
      "reports",
    ]);
    expect(planned.code, planned.stderr).toBe(0);
    expect((await run("plan markdown", ["plan", "rules", "--format", "markdown", "--out", "plan-md.json"])).code).toBe(
      0,
    );
    expect(
      (await run("plan json", ["plan", "rules", "--format", "json", "--out", "plan-deny.json", "--log-format", "json"]))
        .code,
    ).toBe(0);
    expect(
      (
        await run("plan for unknown outcomes", [
          "plan",
          "rules",
          "--rule",
          "abort-onboardings",
          "--out",
          "plan-unknown.json",
          "-q",
        ])
      ).code,
    ).toBe(0);
    expect(
      (
        await run("plan for the lock", [
          "plan",
          "rules",
          "--rule",
          "approve-expenses",
          "--rule",
          "abort-onboardings",
          "--out",
          "plan-lock.json",
          "-q",
        ])
      ).code,
    ).toBe(0);
    const plan = JSON.parse(await readFile(join(dir, "plan.json"), "utf8")) as Plan;
    const instance = String(plan.changes[0]?.instance_id);
    expect((await run("explain", ["explain", "rules", "--instance", instance])).code).toBe(0);
    expect(
      (
        await run("explain json", [
          "explain",
          "rules",
          "--instance",
          instance,
          "--format",
          "json",
          "--log-format",
          "json",
        ])
      ).code,
    ).toBe(0);
    expect((await run("test", ["test", resolve("rules"), "--junit", "junit.xml"])).code).toBe(0);
    const applied = await run("apply plan", [
      "apply",
      "plan.json",
      "--log-format",
      "json",
      "--journal",
      "journal.jsonl",
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(
      (await run("apply auto-approve", ["apply", "rules", "--auto-approve", "--rule", "note-purchases"])).code,
    ).toBe(0);
    expect(existsSync(join(dir, ".flowrules", "runs"))).toBe(true);

    mode = "unknown";
    const unknown = await run("apply outcome unknown", ["apply", "plan-unknown.json", "--journal", "unknown.jsonl"]);
    expect(unknown.code, unknown.stdout + unknown.stderr).toBe(1);
    expect(await readFile(join(dir, "unknown.jsonl"), "utf8")).toMatch(/"outcome_unknown":true/);

    mode = "ok";
    // the lock file of a CLI apply, left behind by kill -9; the take-over, and a refusal while a lock is held
    sb.setFaults({ latencyMs: 40 });
    const slow = spawn(process.execPath, [CLI, "apply", "plan-lock.json"], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        FLOWRULES_BASE_URL: proxy.baseUrl,
        FLOWRULES_API_KEY: KEY,
        FLOWRULES_RATE_LIMIT: "0",
      },
      stdio: "ignore",
    });
    const slowDone = new Promise<void>((r) => slow.on("close", () => r()));
    const lockFile = join(dir, ".flowrules", "apply.lock");
    let lockText = "";
    for (let i = 0; i < 20_000 && lockText === "" && slow.exitCode === null; i++) {
      if (existsSync(lockFile)) lockText = await readFile(lockFile, "utf8").catch(() => "");
      else await new Promise((r) => setTimeout(r, 2));
    }
    slow.kill("SIGKILL");
    await slowDone;
    sb.setFaults({ latencyMs: 0 });
    expect(lockText).toMatch(/"pid": \d+/);
    outputs.push({ what: "lock file", text: lockText });
    expect((await run("apply after kill", ["apply", "plan-lock.json"])).stderr).toMatch(/took over the stale lock/);
    const held = acquireLock(lockFile, { applying: "plan-lock.json", timeoutMs: 60_000 });
    try {
      const refused = await run("apply while locked", ["apply", "plan-lock.json"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/another apply holds the lock/);
    } finally {
      held.release();
    }

    // error paths
    mode = "deny";
    const denied = await run("plan 401", ["plan", "rules"]);
    expect(denied.code).toBe(1);
    expect(denied.stdout + denied.stderr).toMatch(/401/);
    expect((await run("plan 401 json", ["plan", "rules", "--log-format", "json"])).code).toBe(1);
    expect((await run("apply 401", ["apply", "plan-deny.json"])).code).toBe(1);
    expect((await run("explain 401", ["explain", "rules", "--instance", instance])).code).toBe(1);

    mode = "echo";
    const echoed = await run("plan echo", ["plan", "rules"]);
    expect(echoed.code).toBe(1);
    expect(echoed.stdout + echoed.stderr).toMatch(/\[REDACTED\]/);
    expect((await run("plan echo debug", ["plan", "rules"], { FLOWRULES_DEBUG: "1" })).code).toBe(1);
    expect((await run("plan echo json", ["plan", "rules", "--log-format", "json"])).code).toBe(1);
    expect((await run("explain echo", ["explain", "rules", "--instance", instance, "--format", "json"])).code).toBe(1);

    mode = "html-echo";
    expect((await run("plan html", ["plan", "rules", "--format", "markdown"])).code).toBe(1);

    mode = "unavailable";
    const exhausted = await run("plan 503", ["plan", "rules", "--log-format", "json"]);
    expect(exhausted.code).toBe(1);
    expect(exhausted.stdout + exhausted.stderr).toMatch(/503/);
    expect(exhausted.stderr).toMatch(/request\.retried/);

    mode = "ok";
    await writeFile(join(dir, "broken-plan.json"), (await readFile(join(dir, "plan-md.json"), "utf8")).slice(0, 300));
    expect((await run("apply bad plan", ["apply", "broken-plan.json"])).code).toBe(1);
    expect(
      (
        await run("apply bad plan json", ["apply", "broken-plan.json", "--log-format", "json"], {
          FLOWRULES_DEBUG: "1",
        })
      ).code,
    ).toBe(1);
    // the key put in the URL variable by mistake
    const swapped = await run("swapped variables", ["plan", "rules"], { FLOWRULES_BASE_URL: KEY });
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toMatch(/not an http\(s\) URL/);
    await writeFile(
      join(dir, "rules", "broken.yaml"),
      `version: 1\nrules:\n  - name: b\n    workflow: 1042\n    actions: [abrt]\n`,
    );
    expect((await run("validate github broken", ["validate", "rules", "--format", "github"])).code).toBe(1);

    // what was written: plans, journals, reports, JUnit, the runs folder
    const files = await filesBelow(dir);
    for (const want of ["plan.json", "journal.jsonl", "unknown.jsonl", "junit.xml"])
      expect(
        files.some((f) => f.endsWith(want)),
        want,
      ).toBe(true);
    expect(files.some((f) => f.includes(`${join("reports", "expense-report")}.csv`))).toBe(true);
    expect(files.some((f) => f.endsWith("plan.json.journal.jsonl") && f.includes("runs"))).toBe(true);
    for (const f of files) outputs.push({ what: f, text: await readFile(f, "utf8") });

    const found = outputs.flatMap((o) => leaks(o.text).map((piece) => `${o.what}: ${piece}`));
    expect(found).toEqual([]);
    // the scan is real: the key itself is what the service saw
    expect(leaks(KEY)).toHaveLength(KEY.length - 7);
  }, 120_000);
});

describe("plain http:// to a host that is not loopback", () => {
  it("is refused by the client and by every verb before any socket opens", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), RULES);
    const attempts: string[] = [];
    const connect = net.Socket.prototype.connect;
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      attempts.push(String(args[0] && typeof args[0] === "object" ? JSON.stringify(args[0]) : args[0]));
      return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
    } as typeof connect;
    try {
      const remote = "http://10.255.255.1/api";
      expect(() => createClient({ baseUrl: remote, apiKey: KEY })).toThrow(InsecureUrlError);
      expect(() => connectionSettings({ baseUrl: remote }, { FLOWRULES_API_KEY: KEY })).toThrow(
        /refusing plain http:\/\/ to 10\.255\.255\.1/,
      );
      expect(connectionSettings({ baseUrl: remote, insecureHttp: true }, { FLOWRULES_API_KEY: KEY }).baseUrl).toBe(
        remote,
      );
      // and the commands themselves, handed such settings directly
      const conn = {
        baseUrl: remote,
        apiKey: KEY,
        rateLimitPerMin: 0,
        concurrency: 1,
        timeoutMs: 1000,
        insecureHttp: false,
      };
      const io = captureIO();
      await expect(
        planCommand(
          {
            paths: [join(dir, "rules", "rules.yaml")],
            format: "text",
            detailedExitcode: false,
            rules: [],
            quiet: true,
            connection: conn,
          },
          io,
        ),
      ).rejects.toThrow(InsecureUrlError);
      const bare: Plan = {
        format_version: 1,
        flowrules_version: "test",
        created_at: new Date().toISOString(),
        base_url: remote,
        rules_digest: "sha256:test",
        rules: [],
        changes: [],
        reports: [],
        errors: [],
        summary: { complete_step: 0, save_step: 0, abort: 0, reports: 0, errors: 0 },
      };
      await writeFile(join(dir, "remote-plan.json"), JSON.stringify({ ...bare, digest: planDigest(bare) }));
      await expect(
        applyCommand(
          {
            paths: [join(dir, "remote-plan.json")],
            autoApprove: false,
            detailedExitcode: false,
            quiet: true,
            rules: [],
            connection: conn,
            cwd: dir,
          },
          io,
        ),
      ).rejects.toThrow(InsecureUrlError);
      expect(attempts).toEqual([]);
      expect(leaks(io.out() + io.err())).toEqual([]);
    } finally {
      net.Socket.prototype.connect = connect;
    }

    // the CLI: a preload reports every connection attempt of the child
    const preload = join(dir, "report-sockets.mjs");
    await writeFile(
      preload,
      `import net from "node:net";\nconst c = net.Socket.prototype.connect;\nnet.Socket.prototype.connect = function (...a) { process.stderr.write("NETWORK-ATTEMPT\\n"); return c.apply(this, a); };\n`,
    );
    const cli = (args: string[], baseUrl: string): Promise<CliResult> =>
      new Promise((done) => {
        const child = spawn(process.execPath, ["--import", `file://${preload}`, CLI, ...args], {
          cwd: dir,
          env: {
            PATH: process.env.PATH,
            FLOWRULES_BASE_URL: baseUrl,
            FLOWRULES_API_KEY: KEY,
            FLOWRULES_RATE_LIMIT: "0",
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("close", (code) => done({ code, stdout, stderr }));
      });
    // control: the preload does see a connection when one is made
    const control = await cli(["plan", "rules", "-q"], proxy.baseUrl);
    expect(control.stderr).toContain("NETWORK-ATTEMPT");
    for (const args of [
      ["plan", "rules"],
      ["apply", "remote-plan.json"],
      ["apply", "rules", "--auto-approve", "--rule", "note-purchases"],
      ["explain", "rules", "--instance", "1"],
    ]) {
      const r = await cli(args, "http://10.255.255.1/api");
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(
        /^flowrules: refusing plain http:\/\/ to 10\.255\.255\.1: .*--insecure-http/,
      );
      expect(r.stderr).not.toContain("NETWORK-ATTEMPT");
      expect(leaks(r.stdout + r.stderr)).toEqual([]);
    }
  }, 60_000);
});

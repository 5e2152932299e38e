/**
 * Hostile and unlucky inputs, round six (the smaller defects): each case below went through once; every test tries
 * the input again over the built CLI or the real module and fails if it goes through.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createClient, redact } from "../../src/api/index.js";
import { maskKeyInPlan } from "../../src/engine/mask-plan.js";
import { cursorPages, type Page } from "../../src/api/pagination.js";
import { maskUserinfo } from "../../src/api/url-guard.js";
import { keyShaped } from "../../src/model/config.js";
import { MAX_DURATION_MS, readDuration } from "../../src/text/duration.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { runCli, spawnCli, type CliResult } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { stderrOf } from "../watch/helpers.js";

const drain = async (pages: AsyncIterable<unknown>): Promise<number> => {
  let n = 0;
  for await (const _ of pages) n += 1;
  return n;
};

describe("credentials in a service URL are masked from the parsed URL", () => {
  it("a password holding @, a space or a tab never shows, whole or in part", () => {
    expect(maskUserinfo("https://user:Zq@K9@h/api")).toBe("https://***@h/api");
    expect(maskUserinfo("https://user:Zq K9@h/api")).toBe("https://***@h/api");
    expect(maskUserinfo("https://user:Zq\tK9@h/api")).toBe("https://***@h/api");
    expect(maskUserinfo("https://bob@h/api")).toBe("https://***@h/api");
    expect(maskUserinfo("ftp://bob:hunter2@host/x")).toBe("ftp://***@host/x");
    // a query or fragment may carry a token: only that there is one is said
    expect(maskUserinfo("https://h/api?token=s3cret#frag")).toBe("https://h/api?…#…");
    // text the parser refuses is not shown when it could hold a credential
    expect(maskUserinfo("https://user:Zq/K9@h/api")).not.toMatch(/Zq|K9/);
    expect(maskUserinfo("no url here")).toBe("no url here");
    expect(maskUserinfo("http://127.0.0.1:4010/api")).toBe("http://127.0.0.1:4010/api");
  });

  it("the CLI refuses such a URL in one line that shows none of the password", async () => {
    for (const url of ["https://user:Zq@K9@h/api", "https://user:Zq K9@h/api", "https://user:Zq\tK9@h/api"]) {
      const r = await runCli(["workflows", "--base-url", url], { FLOWRULES_API_KEY: "sandbox-lead" });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/https:\/\/\*\*\*@h\/api: a service URL must not carry a user name or password/);
      expect(r.stderr).not.toMatch(/Zq|K9/);
    }
  });
});

describe("a listing whose cursor pages never end is capped", () => {
  it("the endless-cursor quirk over HTTP: stopped at the page cap, then at the item cap, each in one error naming the server's behaviour", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 120, seed: 42, quirks: ["endless-cursor"] }));
    const listings = (): number => sb.requests().filter((r) => r.path.includes("/instances")).length;
    const byPages = createClient({
      baseUrl: sb.baseUrl,
      apiKey: "sandbox-admin",
      rateLimitPerMin: 0,
      listingLimits: { maxPages: 12 },
    });
    await expect(drain(byPages.instancePages(1042))).rejects.toThrow(
      /^listing instances of workflow 1042, page 12: the service's pages do not end: 12 pages fetched without a count and the last one still has a next link \(a listing may take 12\)$/,
    );
    expect(listings()).toBe(12);
    const before = listings();
    const byItems = createClient({
      baseUrl: sb.baseUrl,
      apiKey: "sandbox-admin",
      rateLimitPerMin: 0,
      listingLimits: { maxItems: 400 },
    });
    await expect(drain(byItems.instancePages(1042))).rejects.toThrow(
      /the service's pages do not end: \d+ items in \d+ pages without a count, more than the 400 a listing may hold$/,
    );
    // 50 a page (small-pages): the ninth page passes 400
    expect(listings() - before).toBe(9);
    await byPages.close();
    await byItems.close();
  });

  it("a cursor sent back under another link is a loop, stopped at once", async () => {
    const pages: Record<string, Page<number>> = {
      "/l/": { count: null, next: "/l/?cursor=A", previous: null, results: [1] },
      "/l/?cursor=A": { count: null, next: "/l/?cursor=B", previous: null, results: [2] },
      "/l/?cursor=B": { count: null, next: "/l/?page_size=9&cursor=A", previous: null, results: [3] },
    };
    const asked: string[] = [];
    const fetch = async (path: string): Promise<Page<number>> => {
      asked.push(path);
      const page = pages[path];
      if (page === undefined) throw new Error(`not a page: ${path}`);
      return page;
    };
    await expect(drain(cursorPages("/l/", fetch, (next) => next))).rejects.toThrow(
      /pagination loop: the service sent back a cursor it had already given/,
    );
    expect(asked).toEqual(["/l/", "/l/?cursor=A", "/l/?cursor=B"]);
  });
});

/** One line on stderr, exit 1, nothing on stdout. */
function oneLine(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr.trimEnd().split("\n"), r.stderr).toHaveLength(1);
  expect(r.stderr.trim()).toMatch(message);
}

describe("durations a timer can hold", () => {
  const nowhere = ["--base-url", "http://127.0.0.1:9/api"];
  const key = { FLOWRULES_API_KEY: "sandbox-admin" };

  it("every duration reader refuses 2^31 ms or more, and --clock-skew past a day, in one line", async () => {
    expect(readDuration("24d")).toEqual({ ok: true, ms: MAX_DURATION_MS });
    expect(MAX_DURATION_MS).toBeLessThan(2 ** 31);
    for (const raw of ["25d", "24.9d", "596h", "2147483648ms", "99999999999999999999d"]) {
      expect(readDuration(raw), raw).toEqual({
        ok: false,
        problem: `must be at most 24d (a timer cannot wait longer), got ${JSON.stringify(raw)}`,
      });
    }
  });

  it("--interval, --timeout, --lock-wait and --clock-skew from the CLI", async () => {
    const dir = await tempDir("flowrules-durations-");
    await mkdir(join(dir, "rules"));
    oneLine(
      await runCli(["watch", "rules", ...nowhere, "--interval", "25d"], key, { cwd: dir }),
      /^flowrules: --interval must be at most 24d \(a timer cannot wait longer\), got "25d"$/,
    );
    oneLine(
      await runCli(["plan", "rules", ...nowhere, "--timeout", "25d"], key, { cwd: dir }),
      /^flowrules: --timeout must be at most 24d/,
    );
    oneLine(
      await runCli(["apply", "plan.json", ...nowhere, "--lock-wait", "30d"], key, { cwd: dir }),
      /^flowrules: --lock-wait must be at most 24d/,
    );
    oneLine(
      await runCli(["apply", "plan.json", ...nowhere, "--clock-skew", "99999999d"], key, { cwd: dir }),
      /^flowrules: --clock-skew must be at most 1d, got "99999999d"$/,
    );
    oneLine(
      await runCli(["apply", "plan.json", ...nowhere, "--clock-skew", "25h"], key, { cwd: dir }),
      /^flowrules: --clock-skew must be at most 1d/,
    );
  });
});

/** The CLI, killed after `ms` if it has not ended (a read of a FIFO used to block it for ever, signals included). */
async function runBounded(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  ms = 15_000,
): Promise<CliResult & { killed: boolean }> {
  const run = spawnCli(args, env, { cwd });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    run.child.kill("SIGKILL");
  }, ms);
  try {
    const r = await run.done;
    return { code: r.code, stdout: r.stdout, stderr: r.stderr, killed };
  } finally {
    clearTimeout(timer);
  }
}

describe("catalog and journal paths that are not regular files", () => {
  it("--workflows FIFO, a device or a folder is one note, the catalog ignored, never read", async () => {
    const dir = await tempDir("flowrules-fifo-catalog-");
    await writeFile(
      join(dir, "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    actions:\n      - report: { group_by: status }\n",
    );
    execFileSync("mkfifo", [join(dir, "fifo")]);
    for (const [path, kind] of [
      ["fifo", "a FIFO"],
      ["/dev/zero", "a character device"],
      [dir, "a folder"],
    ] as const) {
      const r = await runBounded(["validate", "r.yaml", "--workflows", path], {}, dir);
      expect(r.killed, `validate --workflows ${path} hung`).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`workflow catalog ${path} is ${kind}, not a regular file; it is ignored`);
    }
  });

  it("apply --journal FIFO or folder is refused in one line before the plan is read or any request", async () => {
    const dir = await tempDir("flowrules-fifo-journal-");
    execFileSync("mkfifo", [join(dir, "fifo")]);
    await mkdir(join(dir, "folder"));
    for (const [path, kind] of [
      ["fifo", "a FIFO"],
      ["folder", "a folder"],
    ] as const) {
      const r = await runBounded(
        ["apply", "plan.json", "--journal", path, "--base-url", "http://127.0.0.1:9/api"],
        { FLOWRULES_API_KEY: "sandbox-admin" },
        dir,
      );
      expect(r.killed, `apply --journal ${path} hung`).toBe(false);
      oneLine(r, new RegExp(`^flowrules: the journal .*${path} is ${kind}, not a regular file`));
    }
  });

  it("a catalog that is someone else's file is never quoted: /proc/self/environ", async () => {
    const dir = await tempDir("flowrules-environ-");
    await writeFile(
      join(dir, "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    actions:\n      - report: { group_by: status }\n",
    );
    const r = await runBounded(
      ["validate", "r.yaml", "--workflows", "/proc/self/environ"],
      { MARKER: "s3cr3t-in-the-environment" },
      dir,
    );
    expect(r.stderr).toContain("workflow catalog /proc/self/environ is not valid JSON; it is ignored");
    expect(r.stdout + r.stderr).not.toMatch(/s3cr3t|MARKER|PATH=/);
  });

  it("a plan file that is not JSON is refused without the parser's excerpt of it", async () => {
    const dir = await tempDir("flowrules-not-json-plan-");
    await writeFile(join(dir, "p.json"), '{"format_version": 1, "created_at": SECRET_TOKEN=hunter2xyz}');
    await writeFile(join(dir, "q.json"), '{"changes": [{"id": hunter2xyz}]}');
    for (const file of ["p.json", "q.json"]) {
      const r = await runCli(
        ["apply", file, "--base-url", "http://127.0.0.1:9/api"],
        { FLOWRULES_API_KEY: "sandbox-admin" },
        { cwd: dir },
      );
      oneLine(
        r,
        new RegExp(
          `^flowrules: .*${file.replace(".", "\\.")} is not valid JSON \\(a syntax error[^)]*\\); write plans with`,
        ),
      );
      expect(r.stderr).not.toMatch(/hunter|SECRET/);
    }
  });
});

describe("report files never replace the run's other files", () => {
  const reportRule = (name: string): string =>
    `  - name: ${name}\n    workflow: 1042\n    select: { status: running }\n    actions:\n      - report: { group_by: status }\n`;

  it("a report rule named plan (beside --out plan.json) or flowrules.workflows (beside the catalog) is refused before anything is written", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 20, seed: 42 }));
    const dir = await tempDir("flowrules-report-clash-");
    await writeFile(
      join(dir, "r.yaml"),
      `version: 1\nrules:\n${reportRule("plan")}${reportRule("flowrules.workflows")}`,
    );
    const catalog = '{"not": "touched"}';
    await writeFile(join(dir, "flowrules.workflows.json"), catalog);
    const env = { FLOWRULES_API_KEY: "sandbox-admin" };
    const base = ["--base-url", sb.baseUrl];

    await mkdir(join(dir, "out"));
    const toOut = await runCli(
      ["plan", "r.yaml", ...base, "--out", "out/plan.json", "--report-dir", "out", "--rule", "plan"],
      env,
      { cwd: dir },
    );
    // the catalog's own note and the request count come first: the refusal is the last line
    expect(toOut.code, toOut.stderr).toBe(1);
    expect(toOut.stdout).toBe("");
    expect(toOut.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^flowrules: the report of rule "plan" would be written to out\/plan\.json, which is the plan file --out writes: rename the rule or choose another --report-dir \(nothing was written\)$/,
    );
    expect(await readdir(join(dir, "out"))).toEqual([]);

    const toCatalog = await runCli(
      ["plan", "r.yaml", ...base, "--report-dir", ".", "--rule", "flowrules.workflows"],
      env,
      { cwd: dir },
    );
    expect(toCatalog.code, toCatalog.stderr).toBe(1);
    expect(toCatalog.stdout).toBe("");
    expect(toCatalog.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^flowrules: the report of rule "flowrules\.workflows" would be written to flowrules\.workflows\.json, which is the workflow catalog/,
    );
    expect(await readFile(join(dir, "flowrules.workflows.json"), "utf8")).toBe(catalog);
    expect((await readdir(dir)).sort()).toEqual(["flowrules.workflows.json", "out", "r.yaml"]);

    // apart, both are written
    const apart = await runCli(
      ["plan", "r.yaml", ...base, "--out", "plan.json", "--report-dir", "reports", "--format", "json"],
      env,
      { cwd: dir },
    );
    expect(apart.code, apart.stderr).toBe(0);
    expect((await readdir(join(dir, "reports"))).sort()).toEqual([
      "flowrules.workflows.csv",
      "flowrules.workflows.json",
      "plan.csv",
      "plan.json",
    ]);
    expect(JSON.parse(await readFile(join(dir, "plan.json"), "utf8"))).toHaveProperty("changes");
  });
});

describe("state clear removes only what flowrules wrote", () => {
  it("a folder that is not a state dir, a state file that is not ours, or a folder at a state name: one line, nothing removed", async () => {
    const root = await tempDir("flowrules-state-clear-");
    const listing = async (d: string): Promise<string[]> => (await readdir(d)).sort();
    // a project folder that happens to hold state-like names
    const project = join(root, "project");
    await mkdir(project);
    await writeFile(join(project, "notes.txt"), "mine");
    await writeFile(join(project, "state.jsonl"), '{"my": "own data"}\n');
    await writeFile(join(project, "state.jsonl.backup.tmp"), "mine too");
    const r1 = await runCli(["state", "clear", "--state", project]);
    oneLine(
      r1,
      /^flowrules: not clearing .*project: it is not a state dir flowrules wrote \(it holds "notes\.txt"\); nothing was removed$/,
    );
    expect(await listing(project)).toEqual(["notes.txt", "state.jsonl", "state.jsonl.backup.tmp"]);

    // only state names, but the state is not one flowrules wrote
    const lookalike = join(root, "lookalike");
    await mkdir(lookalike);
    await writeFile(join(lookalike, "state.jsonl"), '{"my": "own data"}\n');
    oneLine(
      await runCli(["state", "clear", "--state", lookalike]),
      /^flowrules: not clearing .*lookalike: state\.jsonl is not a state flowrules wrote; nothing was removed$/,
    );
    expect(await listing(lookalike)).toEqual(["state.jsonl"]);

    // a folder where a temp file would be, beside a real state: refused before the state is removed
    const halfway = join(root, "halfway");
    await mkdir(halfway);
    await writeFile(join(halfway, "state.jsonl"), '{"format":"flowrules-state","format_version":3}\n');
    await mkdir(join(halfway, "state.jsonl.1.tmp"));
    oneLine(
      await runCli(["state", "clear", "--state", halfway]),
      /^flowrules: not clearing .*halfway: state\.jsonl\.1\.tmp is not a regular file; nothing was removed$/,
    );
    expect(await listing(halfway)).toEqual(["state.jsonl", "state.jsonl.1.tmp"]);

    // flowrules' own: removed, and no lock left behind
    await rm(join(halfway, "state.jsonl.1.tmp"), { recursive: true });
    await writeFile(join(halfway, "state.jsonl.77.tmp"), "");
    const ok = await runCli(["state", "clear", "--state", halfway]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await listing(halfway)).toEqual([]);
  });
});

describe("a burst of SIGHUPs stays inside the watcher's interval", () => {
  it("50 SIGHUPs in 2.5 s: reloads gathered, and no more polls than the interval allows", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 40, seed: 42 }));
    const dir = await tempDir("flowrules-sighup-burst-");
    await writeFile(
      join(dir, "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    select: { status: running }\n    actions:\n      - report: { group_by: status }\n",
    );
    const w = spawnCli(
      ["watch", "r.yaml", "--state", "state", "--interval", "2s"],
      {
        FLOWRULES_BASE_URL: sb.baseUrl,
        FLOWRULES_API_KEY: "sandbox-admin",
        FLOWRULES_RATE_LIMIT: "0",
        FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
      },
      { cwd: dir },
    );
    const err = stderrOf(w.child);
    try {
      await err.saw(/cycle 1 \(first, 1 rule\)/, 20_000);
      const lists = (): number =>
        sb.requests().filter((r) => r.method === "GET" && r.path === "/api/v2/processes/1042/instances/").length;
      const before = lists();
      const started = Date.now();
      for (let i = 0; i < 50; i++) {
        w.child.kill("SIGHUP");
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 1000));
      const elapsed = Date.now() - started;
      // one poll an interval (2 s), and one more for the interval that had begun before the burst
      expect(lists() - before).toBeLessThanOrEqual(Math.ceil(elapsed / 2000) + 1);
      // reloads within a second of the last one are gathered into one
      const reloads = (err.text().match(/SIGHUP: read again, unchanged/g) ?? []).length;
      expect(reloads).toBeGreaterThanOrEqual(1);
      expect(reloads).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
      w.child.kill("SIGTERM");
      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
    } finally {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    }
  }, 40_000);
});

describe("a huge file in the rules folder is judged by its size", () => {
  it("a 400 MB .yaml (sparse) is skipped unread with one warning in a folder, refused when named", async () => {
    const dir = await tempDir("flowrules-huge-yaml-");
    await mkdir(join(dir, "rules"));
    await writeFile(
      join(dir, "rules", "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    actions:\n      - report: { group_by: status }\n",
    );
    const huge = join(dir, "rules", "dump.yaml");
    await writeFile(huge, "");
    await truncate(huge, 400 * 1024 * 1024);
    const inFolder = await runCli(["validate", "rules"], {}, { cwd: dir });
    expect(inFolder.code, inFolder.stderr).toBe(0);
    const said = (inFolder.stdout + inFolder.stderr).split("\n").filter((l) => l.includes("dump.yaml"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /rules\/dump\.yaml:1:1 +warning +skipped, not read: the file holds 400\.0 MiB, and a rule file may hold at most 1 MiB/,
    );
    const named = await runCli(["validate", "rules/dump.yaml"], {}, { cwd: dir });
    expect(named.code).toBe(1);
    expect(named.stdout + named.stderr).toMatch(
      /rules\/dump\.yaml:1:1 +error +the file holds 400\.0 MiB: a rule file may hold at most 1 MiB/,
    );
  });
});

describe("a cycle whose journal cannot be read", () => {
  it("a folder at the journal's path: the cycle is set aside in one line, not resumed for ever", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 40, seed: 42 }));
    const dir = await tempDir("flowrules-journal-folder-");
    await writeFile(
      join(dir, "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    select: { status: running }\n    actions:\n      - report: { group_by: status }\n",
    );
    const env = {
      FLOWRULES_BASE_URL: sb.baseUrl,
      FLOWRULES_API_KEY: "sandbox-admin",
      FLOWRULES_RATE_LIMIT: "0",
      FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
    };
    const folder = join(dir, "state", "watch", "cycles", "2026-11-27T09-00-00-000Z-4242-3");
    await mkdir(folder, { recursive: true });
    const planned = await runCli(["plan", "r.yaml", "--out", join(folder, "plan.json")], env, { cwd: dir });
    expect(planned.code, planned.stderr).toBe(0);
    await mkdir(join(folder, "plan.json.journal.jsonl"));

    const w = spawnCli(["watch", "r.yaml", "--state", "state", "--apply", "--interval", "1s"], env, { cwd: dir });
    const err = stderrOf(w.child);
    try {
      await err.saw(/cycle 1 \(first, 1 rule\)/, 20_000);
      const warnings = err
        .text()
        .split("\n")
        .filter((l) => l.includes("journal"));
      expect(warnings, err.text()).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /^flowrules: warning: cannot resume an unfinished cycle: the journal \S+plan\.json\.journal\.jsonl is a folder, not a regular file.*; set aside as \S+-4242-3\.corrupt, planning afresh$/,
      );
      expect(err.text()).not.toMatch(/cycle failed|resuming/);
      expect(existsSync(folder)).toBe(false);
      expect(existsSync(`${folder}.corrupt`)).toBe(true);
      w.child.kill("SIGTERM");
      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
    } finally {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    }
  }, 40_000);
});

describe("--out - is the only document on stdout", () => {
  it("plan --out - (or /dev/stdout, /dev/fd/1) prints one JSON document, the plan file, in every format; the view goes to stderr", async () => {
    const sb = closeAfterAll(await startSandbox({ port: 0, instances: 20, seed: 42 }));
    const dir = await tempDir("flowrules-out-stdout-");
    await writeFile(
      join(dir, "r.yaml"),
      "version: 1\nrules:\n  - name: r\n    workflow: 1042\n    select: { status: running }\n    actions:\n      - report: { group_by: status }\n",
    );
    const env = { FLOWRULES_API_KEY: "sandbox-admin" };
    // stdout by any of its names: `-`, /dev/stdout, /dev/fd/1 (which printed the view, then the plan file)
    const runs: Array<[string, string]> = [
      ["-", "json"],
      ["-", "text"],
      ["/dev/stdout", "json"],
      ["/dev/stdout", "text"],
      ["/dev/fd/1", "markdown"],
    ];
    for (const [out, format] of runs) {
      const r = await runCli(["plan", "r.yaml", "--base-url", sb.baseUrl, "--format", format, "--out", out], env, {
        cwd: dir,
      });
      expect(r.code, r.stderr).toBe(0);
      // JSON.parse takes one document and nothing after it
      const doc = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(doc).toHaveProperty("changes");
      expect(doc).toHaveProperty("reports");
      if (format === "text") {
        expect(r.stderr).toMatch(/^Rule r \(workflow 1042\): \d+ selected/m);
        expect(r.stderr).toMatch(/^ {2}Report r \(rule r\): \d+ instances by status$/m);
      }
      if (format === "markdown") expect(r.stderr).toMatch(/^## flowrules plan/m);
    }
  });
});

describe("a key pasted as api_key_env", () => {
  it("is refused at its file:line:col without being shown, for every verb that reads the profile", async () => {
    const pasted = [
      "ghp_Abc123Def456Ghi789Jkl012Mno345Pqr678",
      "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
      "a8f5f167f44f4964e6c998dee827110c",
      "AKIAIOSFODNN7EXAMPLE",
    ];
    for (const key of pasted) {
      expect(keyShaped(key), key).toBe(true);
      const dir = await tempDir("flowrules-pasted-key-");
      await writeFile(
        join(dir, "flowrules.config.yaml"),
        `default_profile: p\nprofiles:\n  p:\n    base_url: http://127.0.0.1:9/api\n    api_key_env: ${key}\n`,
      );
      for (const verb of [["workflows"], ["plan"]]) {
        const r = await runCli(verb, {}, { cwd: dir });
        oneLine(
          r,
          /^flowrules: flowrules\.config\.yaml:5:18: profiles\.p\.api_key_env: looks like an API key itself, not a variable's name \(it is not shown\)/,
        );
        expect(r.stderr).not.toContain(key);
        expect(r.stderr).not.toContain(key.slice(0, 8));
      }
    }
    // names people give their variables stay names
    for (const name of ["FLOWRULES_API_KEY", "PROD_API_KEY", "K1", "tenant_eu_west_1_api_key", "STAGING_KEY_2026"])
      expect(keyShaped(name), name).toBe(false);
  });
});

describe("a key echoed back in another case is masked", () => {
  const KEY = "fr-Tenant42-abcDEF123456ghiJKL789mno";

  it("redact and the plan's masking ignore the case of the key's letters, whole and in pieces", () => {
    const upper = KEY.toUpperCase();
    expect(redact(`invalid key ${upper}`, KEY, "#")).toBe("invalid key #");
    expect(redact(`invalid key ${KEY.toLowerCase()}!`, KEY, "#")).toBe("invalid key #!");
    // a piece of 16 or more in another case, wherever it stands
    expect(redact(`seen: ${upper.slice(5, 23)} and more`, KEY, "#")).toBe("seen: # and more");
    // base64 and URL-encoded forms too
    expect(redact(`basic ${Buffer.from(KEY).toString("base64").toLowerCase()}`, KEY, "#")).toBe("basic #");
    // ordinary words stay readable
    expect(redact("Tenant overview and DEF totals", KEY, "#")).toBe("Tenant overview and DEF totals");
    const plan = {
      changes: [{ instance_name: `Claim ${upper}`, before: { note: KEY.toLowerCase() } }],
      reports: [],
      errors: [],
    } as unknown as Parameters<typeof maskKeyInPlan>[0];
    expect(maskKeyInPlan(plan, KEY)).toBe(2);
    expect(JSON.stringify(plan)).not.toMatch(/TENANT42|tenant42/i);
  });

  it("a service echoing the key upper-cased in a refusal: printed by no verb", async () => {
    const server = createServer((req, res) => {
      const sent = /^Api-Key (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: `INVALID CREDENTIALS: ${sent.toUpperCase()} / ${sent.toLowerCase()}` }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closeAfterAll({ close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    const dir = await tempDir("flowrules-upper-echo-");
    for (const args of [["workflows"], ["workflows", "--log-format", "json"]]) {
      const r = await runCli(args, { FLOWRULES_BASE_URL: base, FLOWRULES_API_KEY: KEY }, { cwd: dir });
      expect(r.code).toBe(1);
      const all = r.stdout + r.stderr;
      expect(all).toMatch(/401/);
      expect(all.toLowerCase()).not.toContain("tenant42-abcdef");
    }
  });
});

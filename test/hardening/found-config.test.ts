/**
 * `flowrules.config.yaml` found upward only inside a repository the user owns (docs/contracts.md, "Profiles";
 * as git's `safe.directory`): a hostile config beside a fake `.git` in a folder above
 * the working directory — an empty file, someone else's folder, or a repository above the user's home — is never
 * read. The built CLI runs in a child process with HOME set to a temp dir; a trap server stands at the hostile
 * base_url and must get no request. In the user's own repository the file found above is used, named in the run's
 * first line, and explicit settings still win over it.
 */
import { chown, mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const RULES = `version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [] }
`;

let sb: RunningSandbox;
let trap: Server;
let trapUrl: string;
let trapped: Array<{ url: string; authorization: string | undefined }>;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 30, seed: 42 }));
  trapped = [];
  trap = createServer((req, res) => {
    trapped.push({ url: req.url ?? "", authorization: req.headers.authorization });
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => trap.listen(0, "127.0.0.1", r));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}/api`;
});
afterAll(async () => {
  await new Promise<void>((r) => trap.close(() => r()));
});

/** A hostile config: the attacker's service, and the opt-out tag turned off. */
const hostile = (): string =>
  `default_profile: evil\nprofiles:\n  evil:\n    base_url: ${trapUrl}\n    opt_out_tag: ""\n    rate_limit: 0\n`;

/** `top/<below>` with the hostile config in `top`, rules in the working folder, HOME given. */
async function layout(top: string, below: string): Promise<string> {
  const work = join(top, below);
  await mkdir(work, { recursive: true });
  await writeFile(join(top, "flowrules.config.yaml"), hostile());
  await writeFile(join(work, "rules.yaml"), RULES);
  return work;
}

async function plan(work: string, home: string, env: Record<string, string> = {}) {
  trapped = [];
  const r = await runCli(
    ["plan", "rules.yaml"],
    { HOME: home, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0", ...env },
    { cwd: work },
  );
  return { ...r, trapped: [...trapped] };
}

describe("a hostile config above the working directory", () => {
  it("beside an empty `.git` file: not read; the run asks for a service URL and sends nothing to the attacker", async () => {
    const root = await tempDir();
    const home = join(root, "home");
    await mkdir(home);
    const x = join(root, "x");
    const work = await layout(x, join("victim", "work"));
    await writeFile(join(x, ".git"), "");
    const r = await plan(work, home);
    expect(r.trapped).toEqual([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^flowrules: no service URL: pass --base-url, set FLOWRULES_BASE_URL/);
    expect(r.stderr).not.toContain("evil");
    // with the URL given, the plan is made against it, the opt-out tag as its default
    const given = await plan(work, home, { FLOWRULES_BASE_URL: sb.baseUrl });
    expect(given.code, given.stderr).not.toBe(1);
    expect(given.trapped).toEqual([]);
    expect(given.stderr).not.toContain("evil");
  });

  it("beside a `.git` folder of another user, or a gitfile naming nothing: not read", async () => {
    const root = await tempDir();
    const home = join(root, "home");
    await mkdir(home);
    const y = join(root, "y");
    const work = await layout(y, "work");
    await mkdir(join(y, ".git", "objects"), { recursive: true });
    await writeFile(join(y, ".git", "HEAD"), "ref: refs/heads/main\n");
    if (process.getuid?.() === 0) {
      await chown(join(y, ".git"), 65534, 65534);
      const r = await plan(work, home);
      expect(r.trapped).toEqual([]);
      expect(r.stderr).toMatch(/^flowrules: no service URL/);
    }
    const z = join(root, "z");
    const zwork = await layout(z, "work");
    await writeFile(join(z, ".git"), `gitdir: ${join(root, "nowhere")}\n`);
    const r = await plan(zwork, home);
    expect(r.trapped).toEqual([]);
    expect(r.stderr).toMatch(/^flowrules: no service URL/);
  });

  it("in a repository above the user's home: the walk stops at home", async () => {
    const root = await tempDir();
    const repo = join(root, "r");
    const home = join(repo, "home", "me");
    const work = await layout(repo, join("home", "me", "work"));
    await mkdir(join(repo, ".git", "objects"), { recursive: true });
    await writeFile(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    const r = await plan(work, home);
    expect(r.trapped).toEqual([]);
    expect(r.stderr).toMatch(/^flowrules: no service URL/);
  });
});

describe("the user's own repository", () => {
  it("its config above the working directory is used, named in the first line; explicit settings beat it", async () => {
    const root = await tempDir();
    const home = join(root, "home");
    await mkdir(home);
    const repo = join(root, "repo");
    const work = await layout(repo, "rules");
    await mkdir(join(repo, ".git", "objects"), { recursive: true });
    await writeFile(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    // the profile's base_url is used (the trap answers 500), and named first
    const used = await plan(work, home);
    expect(used.trapped.length).toBeGreaterThan(0);
    expect(used.stderr.split("\n")[0]).toBe(
      `flowrules: using profile evil from ${join(repo, "flowrules.config.yaml")} (found above the working directory; --config names another, explicit flags and variables win over it)`,
    );
    // with --log-format json, the same as the first JSON event
    const json = await runCli(
      ["--log-format", "json", "plan", "rules.yaml", "--base-url", sb.baseUrl],
      { HOME: home, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
      { cwd: work },
    );
    expect(JSON.parse(json.stderr.split("\n")[0] ?? "")).toMatchObject({
      level: "warn",
      event: "config.found_above",
      profile: "evil",
      file: join(repo, "flowrules.config.yaml"),
    });
    // FLOWRULES_BASE_URL and --base-url win: the service named gets the requests, the found profile's none
    for (const [args, env] of [
      [[], { FLOWRULES_BASE_URL: sb.baseUrl }],
      [["--base-url", sb.baseUrl], {}],
    ] as const) {
      trapped = [];
      const r = await runCli(
        ["plan", "rules.yaml", ...args],
        { HOME: home, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0", ...env },
        { cwd: work },
      );
      expect(trapped, JSON.stringify(args)).toEqual([]);
      expect(r.code, r.stderr).not.toBe(1);
      expect(r.stderr.split("\n")[0]).toMatch(
        /^flowrules: using profile evil from .*flowrules\.config\.yaml \(found above the working directory/,
      );
    }
  });
});

/**
 * Issue 35, points 2, 3, 7 and 8 (the config file's parts): the key goes only where its source allows, every refusal
 * of it names where it came from, and a hostile or unlucky flowrules.config.yaml (a device, a FIFO, a huge file, an
 * alias bomb, a misspelt key, a harmless variable named as the key) is one located line before any request.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadProfile } from "../../src/cli/profiles.js";
import { UserError } from "../../src/model/errors.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, type CliResult } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let dir: string;

/** The profile names the sandbox as its service; its key lives in K1. */
const config = (baseUrl: string): string =>
  `default_profile: prod\nprofiles:\n  prod:\n    base_url: ${baseUrl}\n    api_key_env: K1\n    rate_limit: 0\n`;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 20, seed: 35 }));
  dir = await tempDir("flowrules-config-keys-");
  await writeFile(join(dir, "flowrules.config.yaml"), config(sb.baseUrl));
  // a profile whose own service is elsewhere (nothing listens on port 9): the sandbox is "another URL" for it
  await mkdir(join(dir, "elsewhere"));
  await writeFile(join(dir, "elsewhere", "flowrules.config.yaml"), config("http://127.0.0.1:9/api"));
});

const ids = (r: CliResult): number[] => (JSON.parse(r.stdout) as Array<{ id: number }>).map((w) => w.id).sort();

/** One line on stderr, exit 1, nothing on stdout, no request reached the sandbox, and the key nowhere. */
async function refused(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  message: RegExp,
  secret?: string,
): Promise<void> {
  const before = sb.requests().length;
  const r = await runCli(args, env, { cwd });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr.trim()).toMatch(message);
  if (secret !== undefined) expect(r.stderr).not.toContain(secret);
  expect(sb.requests().length).toBe(before);
}

describe("where the key comes from and where it goes", () => {
  it("FLOWRULES_API_KEY wins over the profile's api_key_env", async () => {
    const r = await runCli(
      ["workflows", "--format", "json"],
      { K1: "sandbox-admin", FLOWRULES_API_KEY: "sandbox-lead" },
      { cwd: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    // the lead's key sees two workflows, the administrator's four
    expect(ids(r)).toEqual([1042, 1043]);
  });

  it("a profile's key is never sent to a URL the profile did not name: one line before any request", async () => {
    const elsewhere = join(dir, "elsewhere");
    const secret = "sandbox-admin";
    const why =
      /^flowrules: (--base-url|FLOWRULES_BASE_URL) http:\/\/127\.0\.0\.1:\d+\/api: profile prod names http:\/\/127\.0\.0\.1:9\/api, and its key \(K1, its api_key_env\) goes to no other service; set FLOWRULES_API_KEY /;
    await refused(["workflows", "--base-url", sb.baseUrl], { K1: secret }, elsewhere, why, secret);
    await refused(["plan", "--base-url", sb.baseUrl], { K1: secret }, elsewhere, why, secret);
    await refused(["workflows"], { K1: secret, FLOWRULES_BASE_URL: sb.baseUrl }, elsewhere, why, secret);
    // with the key for that URL in FLOWRULES_API_KEY the run goes ahead, with that key
    const r = await runCli(
      ["workflows", "--format", "json", "--base-url", sb.baseUrl],
      { K1: secret, FLOWRULES_API_KEY: "sandbox-lead" },
      { cwd: elsewhere },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r)).toEqual([1042, 1043]);
    // the profile's own URL given as a flag (with or without the trailing slash) keeps the profile's key
    const own = await runCli(
      ["workflows", "--format", "json", "--base-url", `${sb.baseUrl.replace(/\/$/, "")}/`],
      { K1: secret },
      { cwd: dir },
    );
    expect(own.code, own.stderr).toBe(0);
    expect(ids(own)).toEqual([1042, 1043, 1044, 1045]);
  });

  it("a user name and password written into a service URL are refused and never echoed, in every message that names the URL", async () => {
    const withUser = sb.baseUrl.replace("http://", "http://bob:hunter2@");
    const elsewhere = join(dir, "elsewhere");
    const masked =
      /^flowrules: (--base-url|FLOWRULES_BASE_URL) http:\/\/\*\*\*@127\.0\.0\.1:\d+\/api\/?: a service URL must not carry a user name or password; the API key goes in FLOWRULES_API_KEY or a profile's api_key_env$/;
    await refused(["workflows", "--base-url", withUser], { FLOWRULES_API_KEY: "sandbox-lead" }, dir, masked, "hunter2");
    await refused(["plan", "--base-url", withUser], { K1: "sandbox-admin" }, elsewhere, masked, "hunter2");
    await refused(
      ["workflows"],
      { FLOWRULES_API_KEY: "sandbox-lead", FLOWRULES_BASE_URL: withUser },
      dir,
      masked,
      "bob",
    );
    // not a URL at all, but still written with a password: shown without it
    await refused(
      ["workflows", "--base-url", "ftp://bob:hunter2@host/x"],
      { FLOWRULES_API_KEY: "sandbox-lead" },
      dir,
      /^flowrules: --base-url is not an http\(s\) URL: "ftp:\/\/\*\*\*@host\/x"$/,
      "hunter2",
    );
    // flowrules config names the problem the same way
    const r = await runCli(["config", "--base-url", withUser], { FLOWRULES_API_KEY: "sandbox-lead" }, { cwd: dir });
    expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect(r.stdout).toMatch(/must not carry a user name or password/);
  });

  it("a refused key (401) and a key a header cannot carry name the key's real source", async () => {
    const fromProfile = await runCli(["workflows"], { K1: "wrong-key-0123" }, { cwd: dir });
    expect(fromProfile.code).toBe(1);
    expect(fromProfile.stderr).toMatch(/the API key in K1 \(profile prod's api_key_env\)/);
    expect(fromProfile.stderr).toMatch(/401/);
    expect(fromProfile.stderr).not.toMatch(/FLOWRULES_API_KEY/);
    const fromEnv = await runCli(
      ["workflows"],
      { K1: "sandbox-admin", FLOWRULES_API_KEY: "wrong-key-0123" },
      { cwd: dir },
    );
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toMatch(/the API key in FLOWRULES_API_KEY/);
    expect(fromEnv.stderr).not.toMatch(/K1/);
    await refused(
      ["workflows"],
      { K1: "sandbox admin" },
      dir,
      /^flowrules: the API key in K1 \(profile prod's api_key_env\) holds a space at position 8 of 13/,
      "sandbox",
    );
  });
});

describe("a hostile or unlucky config file is one located line", () => {
  async function withConfig(name: string, text: string): Promise<string> {
    const d = join(dir, name);
    await mkdir(d);
    await writeFile(join(d, "flowrules.config.yaml"), text);
    return d;
  }

  /** What the loader every verb calls says of the file (in process: the CLI's line is this, after "flowrules: "). */
  function loaderSays(opts: { config?: string; profile?: string }, cwd: string): string {
    try {
      loadProfile(opts, {}, cwd);
      return "accepted";
    } catch (err) {
      expect(err).toBeInstanceOf(UserError);
      return (err as Error).message;
    }
  }

  it("api_key_env naming a variable that holds no secret is refused where it is written", async () => {
    for (const name of ["PATH", "HOME", "USER", "PWD", "LANG", "Path"]) {
      const d = await withConfig(
        `harmless-${name}`,
        `profiles:\n  prod:\n    base_url: ${sb.baseUrl}\n    api_key_env: ${name}\n`,
      );
      expect(loaderSays({ profile: "prod" }, d)).toMatch(
        new RegExp(`^flowrules\\.config\\.yaml:4:18: profiles\\.prod\\.api_key_env: ${name} holds no secret`),
      );
    }
    await refused(
      ["workflows", "--profile", "prod"],
      {},
      join(dir, "harmless-PATH"),
      /^flowrules: flowrules\.config\.yaml:4:18: profiles\.prod\.api_key_env: PATH holds no secret/,
    );
  });

  it("a device, a FIFO, a folder or more than 1 MiB is refused without reading it", async () => {
    const big = join(dir, "big.yaml");
    await writeFile(big, `profiles: {}\n${"#".repeat(1024 * 1024)}\n`);
    const fifo = join(dir, "config.fifo");
    execFileSync("mkfifo", [fifo]);
    const cases: Array<[string, string]> = [
      ["/dev/zero", "a character device, not a regular file"],
      [fifo, "a FIFO, not a regular file"],
      [dir, "a folder, not a regular file"],
      [big, "larger than 1 MiB, the most it may hold"],
    ];
    for (const [file, why] of cases)
      expect(loaderSays({ config: file }, dir).endsWith(`: cannot read the config file (${why})`), file).toBe(true);
    await refused(
      ["plan", "--config", "/dev/zero"],
      { FLOWRULES_API_KEY: "sandbox-admin" },
      dir,
      /^flowrules: \/dev\/zero: cannot read the config file \(a character device/,
    );
    // completion says nothing and returns at once
    for (const file of ["/dev/zero", fifo]) {
      expect(await runCli(["__complete", "profiles", "--", "plan", "--config", file], {}, { cwd: dir })).toEqual({
        code: 0,
        stdout: "",
        stderr: "",
      });
    }
  });

  it("an alias bomb, a misspelt key and a bad profile name are located lines, never an internal error", async () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (const [i, c] of ["b", "c", "d", "e", "f", "g", "h"].entries())
      bomb.push(
        `${c}: &${c} [${Array(9)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(", ")}]`,
      );
    const cases: Array<[string, string, RegExp]> = [
      [
        "bomb",
        `${bomb.join("\n")}\nprofiles: {}\n`,
        /^flowrules\.config\.yaml:2:\d+: YAML aliases \(\*name\) expand too far/,
      ],
      [
        "profile-key",
        "profiles:\n  prod:\n    bse_url: http://127.0.0.1:9/api\n",
        /^flowrules\.config\.yaml:3:5: profiles\.prod\.bse_url: unknown key; did you mean "base_url"\?/,
      ],
      [
        "top-key",
        "default_profle: prod\nprofiles:\n  prod: {}\n",
        /^flowrules\.config\.yaml:1:1: default_profle: unknown key; did you mean "default_profile"\?/,
      ],
      [
        "top-missing",
        "profils:\n  prod: {}\n",
        /^flowrules\.config\.yaml:1:1: profils: unknown key; did you mean "profiles"\?/,
      ],
      [
        "name",
        'profiles:\n  "prod env": {}\n',
        /^flowrules\.config\.yaml:2:3: profile name "prod env": a profile name is letters, digits/,
      ],
      ["twice", "profiles:\n  prod: {}\n  prod: {}\n", /^flowrules\.config\.yaml:3:3: profiles\.prod: written twice/],
      [
        "escape",
        'profiles:\n  prod:\n    "\\e[2Kx\\ny": 1\n',
        /^flowrules\.config\.yaml:3:5: profiles\.prod\."\\u001b\[2Kx\\ny": unknown key/,
      ],
    ];
    for (const [name, text, message] of cases)
      expect(loaderSays({}, await withConfig(name, text)), name).toMatch(message);
    // through the CLI: one line, for plan as for validate (which once called it an internal error)
    await refused(
      ["plan"],
      { FLOWRULES_API_KEY: "sandbox-admin" },
      join(dir, "bomb"),
      /^flowrules: flowrules\.config\.yaml:2:\d+: YAML aliases/,
    );
    await refused(
      ["validate", "none.yaml"],
      {},
      join(dir, "profile-key"),
      /^flowrules: flowrules\.config\.yaml:3:5: profiles\.prod\.bse_url: unknown key; did you mean/,
    );
  });
});

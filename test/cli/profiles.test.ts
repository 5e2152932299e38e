/**
 * Profiles (DESIGN.md section 13): two sandboxes stand for two tenants, one flowrules.config.yaml names both, and the
 * built CLI is run the way an operator would. Each run must reach the profile's service with the profile's key, in the
 * order flag > environment > profile > default; a key in the file, an unknown profile and a bad file are one line.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConfigJsonSchema } from "../../src/model/config.js";
import { configSchemaText, CONFIG_SCHEMA_FILE } from "../../src/cli/write-config-schema.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";

let staging: RunningSandbox;
let prod: RunningSandbox;
let dir: string;
let hook: Server;
let hookUrl: string;
const received: Array<Record<string, unknown>> = [];

/** The keys live in the environment under the names the profiles give; each sandbox knows both demo keys. */
const KEYS = { STAGING_KEY: "sandbox-admin", PROD_KEY: "sandbox-lead" };

function config(): string {
  return [
    "# yaml-language-server: $schema=../schemas/flowrules.config.schema.json",
    "default_profile: staging",
    "profiles:",
    "  staging:",
    `    base_url: ${staging.baseUrl}`,
    "    api_key_env: STAGING_KEY",
    "    rate_limit: 0",
    "  prod:",
    `    base_url: ${prod.baseUrl}`,
    "    api_key_env: PROD_KEY",
    "    rate_limit: 0",
    `    notify: ${hookUrl}`,
    "",
  ].join("\n");
}

beforeAll(async () => {
  staging = await startSandbox({ port: 0, instances: 60, seed: 3 });
  prod = await startSandbox({ port: 0, instances: 60, seed: 4 });
  hook = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      received.push(JSON.parse(body) as Record<string, unknown>);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
  const addr = hook.address();
  hookUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/hook`;
  dir = await mkdtemp(join(tmpdir(), "flowrules-profiles-"));
  await writeFile(join(dir, "flowrules.config.yaml"), config());
});

afterAll(async () => {
  await staging?.close();
  await prod?.close();
  await new Promise<void>((r) => (hook ? hook.close(() => r()) : r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

function reset(): void {
  staging.clearRequests();
  prod.clearRequests();
  received.length = 0;
}

const cwd = (): { cwd: string } => ({ cwd: dir });
const workflowIds = (stdout: string): number[] => (JSON.parse(stdout) as Array<{ id: number }>).map((w) => w.id).sort();

describe("profiles: the right service with the right key", () => {
  it("the default profile, --profile and FLOWRULES_PROFILE each reach their own sandbox only, with their own key", async () => {
    reset();
    const byDefault = await runCli(["workflows", "--format", "json"], KEYS, cwd());
    expect(byDefault.code, byDefault.stderr).toBe(0);
    // the administrator's key sees all four workflows; the lead's only the two it leads
    expect(workflowIds(byDefault.stdout)).toEqual([1042, 1043, 1044, 1045]);
    expect(staging.requests().length).toBeGreaterThan(0);
    expect(prod.requests()).toEqual([]);

    reset();
    const flag = await runCli(["workflows", "--format", "json", "--profile", "prod"], KEYS, cwd());
    expect(flag.code, flag.stderr).toBe(0);
    expect(workflowIds(flag.stdout)).toEqual([1042, 1043]);
    expect(prod.requests().length).toBeGreaterThan(0);
    expect(staging.requests()).toEqual([]);

    reset();
    const env = await runCli(["workflows", "--format", "json"], { ...KEYS, FLOWRULES_PROFILE: "prod" }, cwd());
    expect(workflowIds(env.stdout)).toEqual([1042, 1043]);
    expect(staging.requests()).toEqual([]);
  });

  it("precedence: --profile beats FLOWRULES_PROFILE; FLOWRULES_BASE_URL beats the profile's base_url; --base-url beats both", async () => {
    reset();
    const r = await runCli(
      ["workflows", "--format", "json", "--profile", "staging"],
      { ...KEYS, FLOWRULES_PROFILE: "prod" },
      cwd(),
    );
    expect(workflowIds(r.stdout)).toEqual([1042, 1043, 1044, 1045]);
    expect(prod.requests()).toEqual([]);

    reset();
    // another service than the profile's takes its key from FLOWRULES_API_KEY (the profile's key stays with its service)
    const env = await runCli(
      ["workflows", "--format", "json", "--profile", "prod"],
      { ...KEYS, FLOWRULES_BASE_URL: staging.baseUrl, FLOWRULES_API_KEY: "sandbox-lead" },
      cwd(),
    );
    expect(env.code, env.stderr).toBe(0);
    expect(workflowIds(env.stdout)).toEqual([1042, 1043]);
    expect(prod.requests()).toEqual([]);
    expect(staging.requests().length).toBeGreaterThan(0);

    reset();
    // --base-url naming the profile's own service keeps the profile's key
    const flag = await runCli(
      ["workflows", "--format", "json", "--profile", "prod", "--base-url", prod.baseUrl],
      { ...KEYS, FLOWRULES_BASE_URL: staging.baseUrl },
      cwd(),
    );
    expect(flag.code, flag.stderr).toBe(0);
    expect(workflowIds(flag.stdout)).toEqual([1042, 1043]);
    expect(staging.requests()).toEqual([]);
  });

  it("FLOWRULES_API_KEY beats the profile's variable; with neither set the run stops naming both, before any request", async () => {
    reset();
    const env = await runCli(["workflows", "--format", "json"], { ...KEYS, FLOWRULES_API_KEY: "sandbox-lead" }, cwd());
    expect(env.code, env.stderr).toBe(0);
    // staging's own variable holds the administrator's key; the lead's key from FLOWRULES_API_KEY was used
    expect(workflowIds(env.stdout)).toEqual([1042, 1043]);

    reset();
    const r = await runCli(["plan", "--profile", "prod"], { STAGING_KEY: "sandbox-admin" }, cwd());
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      "flowrules: no API key: set PROD_KEY (the api_key_env of profile prod) or FLOWRULES_API_KEY (it is never taken as a flag or from a file, so it stays out of shell history and CI logs)",
    );
    expect(staging.requests()).toEqual([]);
    expect(prod.requests()).toEqual([]);
  });

  it("every output that names the service names the profile: plan header, JSON plan, notification, log events", async () => {
    reset();
    const rules = join(process.cwd(), "rules", "expenses.yaml"); // workflow 1042, which both keys see
    const text = await runCli(["plan", rules, "--profile", "prod"], KEYS, cwd());
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`flowrules plan against ${prod.baseUrl} (profile prod) at `);
    expect(text.stderr).toMatch(new RegExp(`requests to ${prod.baseUrl.replace(/[.]/g, "\\.")} \\(profile prod\\)`));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ event: "plan.finished", base_url: prod.baseUrl, profile: "prod" });
    expect(String(received[0]?.text)).toContain("(profile prod)");

    reset();
    const json = await runCli(
      ["--log-format", "json", "plan", rules, "--format", "json", "--out", "plan.json"],
      KEYS,
      cwd(),
    );
    expect(json.code, json.stderr).toBe(0);
    const plan = JSON.parse(json.stdout) as { base_url: string; profile?: string };
    expect(plan).toMatchObject({ base_url: staging.baseUrl, profile: "staging" });
    const saved = JSON.parse(await readFile(join(dir, "plan.json"), "utf8")) as { profile?: string };
    expect(saved.profile).toBe("staging");
    const started = json.stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.event === "run.started");
    expect(started).toMatchObject({ command: "plan", base_url: staging.baseUrl, profile: "staging" });
    const explain = await runCli(
      ["explain", rules, "--instance", String(staging.store.ids(1042)[0] ?? 0)],
      KEYS,
      cwd(),
    );
    expect(explain.stdout, explain.stderr).toMatch(/against http:\/\/127\.0\.0\.1:\d+\/api\/? \(profile staging\)/);
    // the saved plan applies under the same profile (its base URL is the profile's)
    const apply = await runCli(["apply", "plan.json"], KEYS, cwd());
    expect([0, 2], apply.stderr).toContain(apply.code);
    expect(apply.stderr).toMatch(/to http:\/\/127\.0\.0\.1:\d+\/api\/? \(profile staging\)/);
  });
});

describe("profiles: the key stays secret", () => {
  it("a profile's key the service refuses (401) appears in no output, in either log format", async () => {
    const secret = "sk-profile-0123456789abcdef";
    const rules = join(process.cwd(), "rules", "expenses.yaml");
    for (const format of ["text", "json"]) {
      const r = await runCli(
        ["--log-format", format, "plan", rules, "--profile", "prod"],
        { ...KEYS, PROD_KEY: secret },
        cwd(),
      );
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/401/);
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(r.stdout + r.stderr).not.toContain(secret.slice(4, 20));
    }
  });
});

describe("profiles: refusals are one line", () => {
  async function withConfig(text: string): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), "flowrules-profiles-bad-"));
    await writeFile(join(d, "flowrules.config.yaml"), text);
    return d;
  }

  const cases: Array<[string, string, string[], RegExp]> = [
    [
      "a key written in the file",
      "profiles:\n  prod:\n    base_url: http://127.0.0.1:9/api\n    api_key: sk-live-0123456789\n",
      ["plan"],
      /^flowrules: flowrules\.config\.yaml:4:5: profiles\.prod\.api_key: an API key is never written in flowrules\.config\.yaml; .*api_key_env/,
    ],
    [
      "a secret under any name, anywhere",
      "profiles:\n  prod:\n    base_url: http://127.0.0.1:9/api\n    auth:\n      client_token: sk-live-0123456789\n",
      ["plan"],
      /^flowrules: flowrules\.config\.yaml:5:7: profiles\.prod\.auth\.client_token: an API key is never written/,
    ],
    [
      "a profile value refused when it is used, still shown in place",
      "profiles:\n  prod:\n    base_url: http://127.0.0.1:9/api\n    notify: ftp://hooks.example.com/x\n",
      ["plan", "--profile", "prod"],
      /^flowrules: flowrules\.config\.yaml:4:13: notify of profile prod: ftp:\/\/ is not allowed/,
    ],
    [
      "an unknown profile",
      "profiles:\n  staging: {}\n  prod: {}\n",
      ["plan", "--profile", "qa"],
      /^flowrules: --profile qa: no such profile in flowrules\.config\.yaml; defined: staging, prod$/,
    ],
    [
      "a default_profile that is not defined",
      "default_profile: qa\nprofiles:\n  prod: {}\n",
      ["plan"],
      /^flowrules: default_profile qa: no such profile in flowrules\.config\.yaml; defined: prod$/,
    ],
    [
      "YAML that does not parse",
      "profiles:\n  prod: { base_url: [\n",
      ["plan"],
      /^flowrules: flowrules\.config\.yaml:\d+:\d+: /,
    ],
    [
      "an unknown key",
      "profiles:\n  prod:\n    base-url: http://127.0.0.1:9/api\n",
      ["plan"],
      /^flowrules: flowrules\.config\.yaml:3:5: profiles\.prod\.base-url: unknown key; did you mean "base_url"\? \(known: base_url, /,
    ],
    [
      "a value of the wrong type",
      "profiles:\n  prod:\n    rate_limit: fast\n",
      ["plan", "--profile", "prod"],
      /^flowrules: flowrules\.config\.yaml:3:17: profiles\.prod\.rate_limit: /,
    ],
  ];

  for (const [what, text, args, message] of cases) {
    it(what, async () => {
      const d = await withConfig(text);
      try {
        const r = await runCli(args, { FLOWRULES_API_KEY: "sandbox-admin" }, { cwd: d });
        expect(r.code).toBe(1);
        expect(r.stderr.trim().split("\n")).toHaveLength(1);
        expect(r.stderr.trim()).toMatch(message);
        expect(r.stderr).not.toContain("sk-live-0123456789");
      } finally {
        await rm(d, { recursive: true, force: true });
      }
    });
  }

  it("--profile with no config file, and --config naming a missing file", async () => {
    const d = await mkdtemp(join(tmpdir(), "flowrules-profiles-none-"));
    try {
      const none = await runCli(["plan", "--profile", "prod"], {}, { cwd: d });
      expect(none.code).toBe(1);
      expect(none.stderr.trim()).toMatch(
        /^flowrules: --profile prod: there is no flowrules\.config\.yaml in .*--config FILE/,
      );
      const missing = await runCli(["plan", "--config", "tenants.yaml"], {}, { cwd: d });
      expect(missing.stderr.trim()).toBe("flowrules: tenants.yaml: cannot read the config file (no such file)");
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe("the documented profiles files", () => {
  /** The YAML of docs/operating.md's two-tenant setup and of the README tour's sandbox profile, as written there. */
  async function documented(): Promise<Array<[string, string]>> {
    const root = join(import.meta.dirname, "..", "..");
    const operating = await readFile(join(root, "docs", "operating.md"), "utf8");
    const readme = await readFile(join(root, "README.md"), "utf8");
    const block = /## Profiles[\s\S]*?```yaml\n([\s\S]*?)```/.exec(operating)?.[1] ?? "";
    const tour = /cat > flowrules\.config\.yaml <<'YAML'\n([\s\S]*?)\n\s*YAML\n/.exec(readme)?.[1] ?? "";
    return [
      ["docs/operating.md", block],
      ["README.md", tour.replace(/^ {7}/gm, "")],
    ];
  }

  it("parse, pass the checks and pick their profiles", async () => {
    for (const [where, text] of await documented()) {
      expect(text, where).toMatch(/profiles:/);
      const d = await mkdtemp(join(tmpdir(), "flowrules-profiles-doc-"));
      try {
        await writeFile(join(d, "flowrules.config.yaml"), text);
        const r = await runCli(["plan"], {}, { cwd: d });
        // settings resolve up to the key: the file itself was accepted
        expect(r.stderr.trim(), where).toMatch(
          /^flowrules: no API key: set [A-Z_]+ \(the api_key_env of profile (staging|sandbox)\)/,
        );
      } finally {
        await rm(d, { recursive: true, force: true });
      }
    }
  });
});

describe("schemas/flowrules.config.schema.json", () => {
  it("is the committed output of `npm run schema`", async () => {
    expect(await readFile(CONFIG_SCHEMA_FILE, "utf8")).toBe(configSchemaText());
  });

  it("accepts a two-tenant file and refuses a key in it (as editors will show)", () => {
    const validate = new Ajv2020Module.default({ strict: false }).compile(buildConfigJsonSchema());
    const good = {
      default_profile: "staging",
      profiles: {
        staging: {
          base_url: "https://s.example.com/api",
          api_key_env: "STAGING_KEY",
          notify: ["https://hooks.example.com/x"],
        },
        prod: { rate_limit: 100 },
      },
    };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ profiles: { prod: { api_key: "sk-1" } } })).toBe(false);
    expect(validate({ profiles: { prod: { api_key_env: "not a name" } } })).toBe(false);
  });
});

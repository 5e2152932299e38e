/**
 * Issue 28, point 11 (key masking): the key is masked in its encoded forms too (base64, base64url, URL-encoded) and
 * in pieces standing on their own, while ordinary words that merely share 8 letters with the key stay readable.
 * Through the CLI: a service echoing the key's base64 in a refusal never gets it printed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redact } from "../../src/api/errors.js";
import { redactor } from "../../src/log/redact.js";
import { MIXED_RULES, tempDir } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";

const KEY = "fr_live-Deployment+Key/2811=xq7";
const b64 = (s: string): string => Buffer.from(s).toString("base64");

describe("masking the key", () => {
  it("masks the key whole, in base64 (padded or not), base64url and URL-encoded", () => {
    const forms = [
      KEY,
      b64(KEY),
      b64(KEY).replace(/=+$/, ""),
      Buffer.from(KEY).toString("base64url"),
      encodeURIComponent(KEY),
    ];
    for (const form of forms) {
      const out = redact(`Authorization: Basic ${form} was refused`, KEY, "[M]");
      expect(out, form).toBe("Authorization: Basic [M] was refused");
    }
    expect(redactor([KEY])(`{"detail":"bad key ${b64(KEY)}"}`)).not.toContain(b64(KEY).slice(0, 12));
  });

  it("masks a piece standing on its own or at a word's edge", () => {
    expect(redact(`known prefix ${KEY.slice(0, 12)}… suffix …${KEY.slice(-10)}`, KEY, "[M]")).toBe(
      "known prefix [M]… suffix …[M]",
    );
    expect(redact(`(${KEY.slice(3, 15)})`, KEY, "[M]")).toBe("([M])");
  });

  it("leaves ordinary words that share 8 letters with the key", () => {
    const text = "Deployments of the deployment+keyring tool";
    expect(redact(text, KEY, "[M]")).toBe(text);
  });

  it("never leaves the whole key, or a standalone piece of 8, in any text (property)", () => {
    const around = fc.stringMatching(/^[ a-z.,:;()"'[\]{}-]{0,20}$/);
    fc.assert(
      fc.property(
        around,
        around,
        fc.nat(KEY.length - 8),
        fc.integer({ min: 8, max: KEY.length }),
        (pre, post, at, len) => {
          const piece = KEY.slice(at, Math.min(KEY.length, at + len));
          fc.pre(piece.length >= 8);
          const sep = (s: string, end: boolean) => (s === "" ? " " : end ? `${s} ` : ` ${s}`);
          const out = redact(`${sep(pre, true)}${piece}${sep(post, false)}`, KEY, "[M]");
          return !out.includes(piece) && !out.includes(KEY);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("a service that echoes the key's base64", () => {
  let server: ReturnType<typeof createServer>;
  let base = "";
  let dir = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      const sent = /^Api-Key (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: `Invalid credentials ${b64(sent)} (${encodeURIComponent(sent)})` }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    dir = await tempDir();
    await writeFile(join(dir, "rules.yaml"), MIXED_RULES);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  it("prints neither the key nor its encodings", async () => {
    for (const args of [["plan", "rules.yaml"], ["workflows"], ["plan", "rules.yaml", "--log-format", "json"]]) {
      const r = await runCli(args, { FLOWRULES_BASE_URL: base, FLOWRULES_API_KEY: KEY }, { cwd: dir });
      expect(r.code).toBe(1);
      const all = r.stdout + r.stderr;
      expect(all).toMatch(/401/);
      for (const form of [KEY, b64(KEY).slice(0, 16), encodeURIComponent(KEY).slice(0, 16)])
        expect(all, form).not.toContain(form);
    }
  });
});

describe("the key found in the service's data", () => {
  it("is masked in the plan shown, the plan file and the report files; the plan still applies", async () => {
    const { startSandbox } = await import("../../src/sandbox/index.js");
    const { startHostileProxy } = await import("./hostile-proxy.js");
    const { readFile, readdir } = await import("node:fs/promises");
    const key = `k-${"7f3a9c2e".repeat(3)}`;
    const sb = await startSandbox({ port: 0, instances: 60, seed: 2813 });
    const proxy = await startHostileProxy(sb.origin, { keys: { [key]: "sandbox-admin" } });
    const dir = await tempDir();
    try {
      // every instance list answer names its first instance after the key
      proxy.setRule((ex) =>
        ex.method === "GET" && /\/instances\/$/.test(ex.path)
          ? { answer: (up) => ({ ...up, body: up.body.replace(/"name":"([^"]*)"/, `"name":"$1 (${key})"`) }) }
          : {},
      );
      await writeFile(
        join(dir, "rules.yaml"),
        `version: 1
rules:
  - name: abort-onboardings
    workflow: 1043
    select: { status: [running] }
    actions: [abort]
  - name: names
    workflow: 1043
    select: { status: [running] }
    actions:
      - report: { group_by: status, columns: [id, name] }
`,
      );
      const env = { FLOWRULES_BASE_URL: proxy.baseUrl, FLOWRULES_API_KEY: key, FLOWRULES_RATE_LIMIT: "0" };
      const planned = await runCli(
        ["plan", "rules.yaml", "--out", "plan.json", "--report-dir", "reports", "--format", "markdown"],
        env,
        { cwd: dir },
      );
      expect(planned.code, planned.stderr).toBe(0);
      expect(planned.stdout).toContain("[redacted]");
      const files = [
        join(dir, "plan.json"),
        ...(await readdir(join(dir, "reports"))).map((f) => join(dir, "reports", f)),
      ];
      const texts = [planned.stdout, planned.stderr, ...(await Promise.all(files.map((f) => readFile(f, "utf8"))))];
      for (const t of texts) expect(t).not.toContain(key);
      const applied = await runCli(["apply", "plan.json"], env, { cwd: dir });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout + applied.stderr).not.toContain(key);
    } finally {
      await proxy.close();
      await sb.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** `flowrules sandbox`: flag validation and a start/stop cycle, in-process. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { UserError } from "../../src/model/errors.js";

function program(): ReturnType<typeof buildProgram> {
  return buildProgram().exitOverride();
}
const argv = (...args: string[]): string[] => ["node", "flowrules", "sandbox", ...args];

afterEach(() => vi.restoreAllMocks());

describe("flowrules sandbox", () => {
  const bad: [string[], RegExp][] = [
    [["--port", "70000"], /--port/],
    [["--port", "abc"], /--port/],
    [["--instances", "-1"], /--instances/],
    [["--seed", "1.5"], /--seed/],
    [["--latency", "slow"], /--latency/],
    [["--fail-rate", "2"], /--fail-rate/],
    [["--rate-limit", "x"], /--rate-limit/],
    [["--reset-rate", "-0.1"], /--reset-rate/],
    [["--quirks", "decimal-strings,bogus"], /^--quirks: unknown quirk "bogus"; known: decimal-strings, /],
  ];
  for (const [args, message] of bad) {
    it(`rejects ${args.join(" ")} with a clear UserError (exit 1)`, async () => {
      const err = await program()
        .parseAsync(argv(...args))
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).message).toMatch(message);
      expect((err as UserError).exitCode).toBe(1);
    });
  }

  it("prints the base URL, the four keys, the tour's profile and a curl example, serves, and stops cleanly on SIGTERM", async () => {
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const before = new Set(process.listeners("SIGTERM"));
    const run = program().parseAsync(argv("--port", "0", "--instances", "25", "--seed", "4", "--fail-rate", "0"));
    for (let k = 0; k < 200 && !out.includes("Ctrl-C"); k++) await new Promise((r) => setTimeout(r, 10));
    const baseUrl = /base URL: (\S+)/.exec(out)?.[1] ?? "";
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    for (const key of ["sandbox-admin", "sandbox-lead", "sandbox-member", "sandbox-outsider"])
      expect(out).toContain(key);
    expect(out).toContain(`curl -H 'Authorization: Api-Key sandbox-admin' ${baseUrl}/processes/`);
    // the README tour's profile, with no client-side limit (the sandbox has none), and saying so
    expect(out).toContain(`  sandbox: { base_url: "${baseUrl}", api_key_env: SANDBOX_KEY, rate_limit: 0 }\n`);
    expect(out).toContain("export SANDBOX_KEY=sandbox-admin\n");
    expect(out).toMatch(/# rate_limit 0: this sandbox limits nothing, so the client sends at full speed/);
    const res = await fetch(`${baseUrl}/v2/processes/1042/instances/`, {
      headers: { Authorization: "Api-Key sandbox-admin" },
    });
    expect(res.status).toBe(200);
    // Call only the handler this command registered (not the test runner's).
    const mine = process.listeners("SIGTERM").filter((l) => !before.has(l));
    expect(mine).toHaveLength(1);
    mine[0]?.("SIGTERM");
    await run;
    await expect(fetch(`${baseUrl}/processes/`)).rejects.toThrow();
    expect(process.listeners("SIGTERM").filter((l) => !before.has(l))).toHaveLength(0);
  });
});

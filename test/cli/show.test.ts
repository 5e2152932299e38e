/** `flowrules show plan.json`: the saved plan rendered again, byte for byte what `plan` printed, with no request. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 400, seed: 3 });
  dir = await tempDir("flowrules-show-");
});
afterAll(async () => {
  await sb.close();
});

const env = () => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: "sandbox-admin",
  FLOWRULES_RATE_LIMIT: "0",
  NO_COLOR: "1",
});

describe("flowrules show", () => {
  it("renders the saved plan in every format exactly as plan printed it, and sends nothing", async () => {
    const file = join(dir, "plan.json");
    for (const format of ["markdown", "text", "html"]) {
      const planned = await runCli(["plan", "rules/", "--format", format, "--out", file, "--quiet"], env());
      expect(planned.code, planned.stderr).toBe(0);
      sb.clearRequests();
      // no connection at all: showing a plan needs neither the service nor a key
      const shown = await runCli(["show", file, "--format", format], { NO_COLOR: "1" });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toBe(planned.stdout);
      expect(sb.requests()).toEqual([]);
    }
    expect(JSON.parse((await runCli(["show", file, "--format", "json"], {})).stdout)).toEqual(
      JSON.parse(await readFile(file, "utf8")),
    );
  });

  it("refuses an edited plan in one line, as apply does", async () => {
    const file = join(dir, "edited.json");
    const planned = await runCli(["plan", "rules/", "--out", file, "--quiet"], env());
    expect(planned.code, planned.stderr).toBe(0);
    const doc = JSON.parse(await readFile(file, "utf8")) as { changes: Array<{ after: Record<string, unknown> }> };
    expect(doc.changes.length).toBeGreaterThan(0);
    doc.changes[0]!.after = { edited: true };
    await writeFile(file, JSON.stringify(doc, null, 2));
    const shown = await runCli(["show", file], {});
    expect(shown.code).toBe(1);
    expect(shown.stderr.trim()).toMatch(
      /^flowrules: .*edited\.json does not match its digest .*refusing to show it — plan again$/,
    );
    expect(shown.stderr.trim().split("\n")).toHaveLength(1);
    const missing = await runCli(["show", join(dir, "nothing.json")], {});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no plan file .*nothing\.json/);
  });
});

/** `--color` and `--no-color` (program-wide): colours whatever stdout is, or none whatever it is; the last one wins. */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const BROKEN = "test/fixtures/rules/broken/bad-enum.yaml";
const ESC = /\x1b\[/;

describe("--color / --no-color", () => {
  it("a pipe gets no colours by default, colours with --color (before or after the verb), none when --no-color comes last", async () => {
    const [plain, coloured, before, last] = await Promise.all([
      runCli(["validate", BROKEN]),
      runCli(["validate", BROKEN, "--color"]),
      runCli(["--color", "validate", BROKEN]),
      runCli(["validate", BROKEN, "--color", "--no-color"]),
    ]);
    for (const r of [plain, coloured, before, last]) expect(r.stdout).toMatch(/bad-enum\.yaml:\d+:\d+/);
    expect(plain.stdout).not.toMatch(ESC);
    expect(coloured.stdout).toMatch(/\x1b\[31merror/);
    expect(before.stdout).toMatch(ESC);
    expect(last.stdout).not.toMatch(ESC);
  });

  it("--color wins over NO_COLOR", async () => {
    const r = await runCli(["validate", BROKEN, "--color"], { NO_COLOR: "1" });
    expect(r.stdout).toMatch(ESC);
  });
});

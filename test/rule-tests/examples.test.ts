/** The shipped rule tests pass through the built CLI, the way `npm test` and CI run them. */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

describe("shipped rule tests", () => {
  for (const dir of ["examples/", "rules/"]) {
    it(`flowrules test ${dir} --require-tests exits 0 with every case passing`, async () => {
      const r = await runCli(["test", dir, "--require-tests"]);
      expect(r.stderr).toBe("");
      const last = r.stdout.trimEnd().split("\n").at(-1) ?? "";
      const m = /^(\d+) passed, (\d+) failed$/.exec(last);
      expect(m, r.stdout).not.toBeNull();
      expect(Number(m?.[1])).toBeGreaterThan(2);
      expect(m?.[2]).toBe("0");
      expect(r.code).toBe(0);
    });
  }
});

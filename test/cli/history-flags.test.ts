/** `flowrules history`'s flags as the built CLI parses them (src/cli/verbs/history/run.ts): one line for a bad value. */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("history flags", () => {
  it("--since takes a time or a duration ago and refuses anything else in one line; --last keeps its words", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "state"));
    const [ago, at, bad, last] = await Promise.all([
      runCli(["history", "--state", "state", "--since", "2h", "--format", "json"], {}, { cwd: dir }),
      runCli(["history", "--state", "state", "--since", "2026-11-25T13:00Z", "--format", "json"], {}, { cwd: dir }),
      runCli(["history", "--state", "state", "--since", "yesterday"], {}, { cwd: dir }),
      runCli(["history", "--state", "state", "--last", "0"], {}, { cwd: dir }),
    ]);
    for (const ok of [ago, at]) {
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ command: "history", cycles: [] });
    }
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe(
      'flowrules: --since must be a time (2026-11-25T13:00Z) or a duration ago (90m, 2h, 7d); got "yesterday"',
    );
    expect(last.code).toBe(1);
    expect(last.stderr.trim()).toBe('flowrules: --last must be a whole number of cycles, at least 1; got "0"');
  });
});

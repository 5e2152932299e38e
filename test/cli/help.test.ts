/** Verb help: each flag that falls back to a variable or a profile says so, and each verb shows examples that parse. */
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { EXAMPLES, examplesText } from "../../src/cli/examples.js";
import { CONNECTION_FLAGS, OUTPUT_FLAGS, PLANNING_FLAGS, type SettingSource } from "../../src/cli/flags.js";
import { runCli } from "../helpers/cli.js";

const program = buildProgram();

describe("verb help", () => {
  it("every verb has examples, and each example uses only that verb's own flags", () => {
    // hidden verbs (`__complete`, called by the completion scripts) have no help and no examples
    const verbs = program.commands.filter((c) => !c.name().startsWith("__"));
    expect(Object.keys(EXAMPLES).sort()).toEqual(verbs.map((c) => c.name()).sort());
    for (const cmd of verbs) {
      const known = new Set(
        [...cmd.options, ...program.options]
          .flatMap((o) => [o.long, o.short])
          .filter((x): x is string => x !== undefined),
      );
      for (const [line] of EXAMPLES[cmd.name()] ?? []) {
        const words = line.split(/\s+/);
        expect(words.slice(0, 2)).toEqual(["flowrules", cmd.name()]);
        const unknown = words.filter((w) => w.startsWith("-") && !known.has(w));
        expect(unknown, line).toEqual([]);
      }
    }
  });

  it("every setting with a variable or a profile key names them in its help, for every verb that has the flag", () => {
    const table: SettingSource[] = [
      ...Object.values(CONNECTION_FLAGS),
      ...Object.values(PLANNING_FLAGS),
      ...Object.values(OUTPUT_FLAGS),
    ];
    let checked = 0;
    // the sandbox's own --rate-limit is the simulated service's limit, not the client's setting
    for (const cmd of program.commands.filter((c) => c.name() !== "sandbox")) {
      for (const s of table) {
        const long = s.flags?.split(" ")[0];
        const option = cmd.options.find((o) => o.long === long);
        if (!option) continue;
        if (s.env) expect(option.description, `${cmd.name()} ${long}`).toContain(`env ${s.env}`);
        if (s.profile) expect(option.description, `${cmd.name()} ${long}`).toContain(`profile ${s.profile}`);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it("`flowrules plan --help` ends with the examples and names the variables (the built CLI)", async () => {
    const r = await runCli(["plan", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(examplesText("plan").trim());
    expect(r.stdout).toMatch(
      /--base-url <url>\s+service base URL, e\.g\. https:\/\/host\/api \(env\s+FLOWRULES_BASE_URL; profile base_url\)/,
    );
    expect(r.stdout).toMatch(/--profile <name>[\s\S]*env FLOWRULES_PROFILE/);
  });
});

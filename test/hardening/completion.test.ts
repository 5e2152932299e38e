/**
 * Issue 35, point 1: completion never runs data. A cloned repository's flowrules.config.yaml, rule files and file
 * names are written by someone else; pressing Tab in bash, zsh or fish over profile, rule and file names that are
 * shell code must create no file. The shells are real sessions (bash calls the completion function as readline does,
 * zsh is driven through a pseudo-terminal, fish answers `complete -C`), calling the built CLI's `__complete`. The zsh
 * and fish tests are skipped where those shells are missing, and fail in CI (test/helpers/programs.ts).
 */
import { readdir, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { needs } from "../helpers/programs.js";
import {
  bashComplete,
  completionScript,
  fishComplete,
  flowrulesBin,
  shellEnv,
  zshCompleter,
} from "../helpers/shells.js";
import { tempDir } from "../helpers/temp.js";

const zsh = needs("completion", ["zsh"]);
const fish = needs("completion", ["fish"]);

let dir: string;
let bin: string;
let env: Record<string, string>;

/** Each one, if a shell ran it, would create a file whose name starts with "pwned" in the current folder. */
const hostile = (tag: string): string[] => [
  `\`touch\${IFS}pwned-${tag}1\``,
  `$(touch pwned-${tag}2)`,
  `x;touch pwned-${tag}3`,
  `a\n$(touch pwned-${tag}4)`,
  `|touch pwned-${tag}5`,
];
/** File names may not hold "/" or a line break; the rest of the list is fair. */
const HOSTILE_FILES = hostile("f").filter((n) => !n.includes("\n"));

beforeAll(async () => {
  dir = await tempDir("flowrules-hostile-completion-");
  bin = await flowrulesBin(dir);
  env = shellEnv(dir, bin);
  // JSON strings are YAML double-quoted scalars: the names arrive in the files exactly as written above
  const profiles = ["safe-one", ...hostile("p")].map((n) => `  ${JSON.stringify(n)}: {}`).join("\n");
  await writeFile(join(dir, "flowrules.config.yaml"), `profiles:\n${profiles}\n`);
  await mkdir(join(dir, "rules"));
  const rules = ["safe-rule", ...hostile("r")]
    .map((n) => `  - { name: ${JSON.stringify(n)}, workflow: 1042, actions: [abort] }`)
    .join("\n");
  await writeFile(join(dir, "rules", "r.yaml"), `version: 1\nrules:\n${rules}\n`);
  for (const f of [...HOSTILE_FILES, "safe-file.json"]) await writeFile(join(dir, f), "{}\n");
});

async function pwned(): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith("pwned"));
}

describe("completion over hostile names runs nothing", () => {
  it("__complete prints only names of the loaders' shape, one a line", async () => {
    const profiles = await runCli(["__complete", "profiles"], {}, { cwd: dir });
    expect(profiles).toEqual({ code: 0, stdout: "safe-one\n", stderr: "" });
    const rules = await runCli(["__complete", "rules"], {}, { cwd: dir });
    expect(rules).toEqual({ code: 0, stdout: "safe-rule\n", stderr: "" });
  });

  it("bash: profile, rule and file names offered, none run, file names kept whole", async () => {
    const file = await completionScript("bash", dir);
    const [profiles, rules, outFiles, configFiles] = await bashComplete(
      file,
      [
        ["flowrules", "plan", "--profile", ""],
        ["flowrules", "plan", "--rule", ""],
        ["flowrules", "plan", "--out", ""],
        ["flowrules", "plan", "--config", "$"],
      ],
      dir,
      env,
    );
    expect(await pwned()).toEqual([]);
    expect(profiles).toEqual(["safe-one"]);
    expect(rules).toEqual(["safe-rule"]);
    // each hostile file name is one candidate, as it is on disk (not split into words, not globbed)
    for (const f of HOSTILE_FILES) expect(outFiles).toContain(f);
    expect(outFiles).toContain("safe-file.json");
    expect(configFiles).toEqual(["$(touch pwned-f2)"]);
  });

  zsh.it("zsh: Tab on profile, rule and file names runs none of them", async () => {
    const complete = await zshCompleter(await completionScript("zsh", dir), dir, bin, env);
    expect(await complete("flowrules plan --profile ")).toEqual(["safe-one"]);
    expect(await complete("flowrules plan --rule ")).toEqual(["safe-rule"]);
    expect(await complete("flowrules plan --out safe")).toEqual(["safe-file.json"]);
    expect(await complete("flowrules plan --out ")).toContain("safe-file.json");
    expect(await pwned()).toEqual([]);
  });

  fish.it("fish: complete -C on profile, rule and file names runs none of them", async () => {
    const file = await completionScript("fish", dir);
    const [profiles, rules, files] = await fishComplete(
      file,
      ["flowrules plan --profile ", "flowrules plan --rule ", "flowrules plan --out "],
      dir,
      env,
    );
    expect(await pwned()).toEqual([]);
    expect(profiles).toEqual(["safe-one"]);
    expect(rules).toEqual(["safe-rule"]);
    expect(files).toContain("safe-file.json");
  });
});

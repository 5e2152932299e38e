/**
 * `flowrules completion bash|zsh|fish`: the scripts parse in their shells (bash -n, zsh -n, fish --no-execute; the
 * zsh and fish tests are skipped where those shells are missing, and fail in CI, which installs them:
 * test/helpers/programs.ts), and real shell sessions complete verbs, flags, format choices, rule names and profile
 * names — the last two through the built CLI's `__complete`, found on PATH as `flowrules` the way a user's shell
 * finds it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Option } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { completionSpec } from "../../src/cli/completion.js";
import { typedLine } from "../../src/commands/complete.js";
import { COMPLETION_SHELLS } from "../../src/render/completion/index.js";
import { runCli } from "../helpers/cli.js";
import { needs } from "../helpers/programs.js";
import {
  bashComplete as bashIn,
  completionScript,
  fishComplete,
  flowrulesBin,
  runShell,
  shellEnv,
  zshCompleter,
  type ShellName,
} from "../helpers/shells.js";

const zsh = needs("completion", ["zsh"]);
const fish = needs("completion", ["fish"]);

let dir: string;
let bin: string;
let env: Record<string, string>;

const CONFIG = `default_profile: staging
profiles:
  staging: { base_url: "http://127.0.0.1:4010/api" }
  production: { base_url: "https://workflows.example/api", api_key_env: PROD_KEY }
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flowrules-completion-"));
  // the scripts call `flowrules __complete …`: a `flowrules` on PATH that runs the built CLI
  bin = await flowrulesBin(dir);
  await mkdir(join(dir, "rules"));
  await writeFile(
    join(dir, "rules", "r.yaml"),
    "version: 1\nrules:\n  - { name: approve-claims, workflow: 1042, actions: [abort] }\n  - { name: approve-orders, workflow: 1044, actions: [abort] }\n  - { name: tidy-onboardings, workflow: 1043, actions: [abort] }\n",
  );
  await writeFile(join(dir, "flowrules.config.yaml"), CONFIG);
  env = shellEnv(dir, bin);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shell = (name: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> =>
  runShell(name, args, dir, { ...env, ...extraEnv });
const script = (shellName: ShellName): Promise<string> => completionScript(shellName, dir);
const bashComplete = (file: string, lines: string[][]): Promise<string[][]> => bashIn(file, lines, dir, env);

describe("flowrules completion", () => {
  it("the bash script parses", async () => {
    await shell("bash", ["-n", await script("bash")]);
  });

  zsh.it("the zsh script parses", async () => {
    await shell("zsh", ["-n", await script("zsh")]);
  });

  fish.it("the fish script parses", async () => {
    await shell("fish", ["--no-execute", await script("fish")]);
  });

  it("an unknown shell is one line listing the choices", async () => {
    const r = await runCli(["completion", "tcsh"], {}, { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tcsh.*bash, zsh, fish/);
    expect(r.stdout).toBe("");
  });

  it("a scripted bash session completes verbs, flags, format choices and rule names", async () => {
    const file = await script("bash");
    const [verbs, flags, formats, rules, afterGlobal, testFormats, logFormats] = await bashComplete(file, [
      ["flowrules", "pl"],
      ["flowrules", "plan", "--ru"],
      ["flowrules", "plan", "--format", ""],
      ["flowrules", "apply", "--rule", "approve-"],
      ["flowrules", "--log-format", "json", "ex"],
      ["flowrules", "test", "--format", ""],
      ["flowrules", "--log-format", ""],
    ]);
    expect(verbs).toEqual(["plan"]);
    expect(flags).toEqual(["--rule"]);
    expect(formats).toEqual(["html", "json", "markdown", "text"]);
    expect(rules).toEqual(["approve-claims", "approve-orders"]);
    // the value of a global flag is not taken for the verb
    expect(afterGlobal).toEqual(["explain"]);
    expect(testFormats).toEqual(["json", "text"]);
    expect(logFormats).toEqual(["json", "text"]);
  });

  it("a flag the generator never named is completed: --profile offers the config's profiles", async () => {
    const program = buildProgram();
    // --profile came from the settings model after the generator was written: it is completed all the same
    const file = join(dir, "with-profile.bash");
    await writeFile(file, COMPLETION_SHELLS.bash(completionSpec(program)));
    const [here, other, flag] = await bashComplete(file, [
      ["flowrules", "plan", "--profile", ""],
      ["flowrules", "plan", "--profile", "pro"],
      ["flowrules", "plan", "--prof"],
    ]);
    expect(here).toEqual(["production", "staging"]);
    expect(other).toEqual(["production"]);
    expect(flag).toEqual(["--profile"]);
  });

  it("names follow the line: rules of the paths typed after the verb, profiles of the file --config names", async () => {
    await mkdir(join(dir, "other"), { recursive: true });
    await writeFile(
      join(dir, "other", "o.yaml"),
      "version: 1\nrules:\n  - { name: other-one, workflow: 1042, actions: [abort] }\n",
    );
    await writeFile(join(dir, "eu.yaml"), "profiles:\n  eu-prod: {}\n  eu-test: {}\n");
    const program = buildProgram();
    program.addOption(new Option("--config <file>", "the config file"));
    const file = join(dir, "with-config.bash");
    await writeFile(file, COMPLETION_SHELLS.bash(completionSpec(program)));
    const [typed, flagValue, configured, configuredEq] = await bashComplete(file, [
      ["flowrules", "plan", "other", "--rule", ""],
      ["flowrules", "plan", "--format", "json", "other/o.yaml", "-q", "--rule", "oth"],
      ["flowrules", "--config", "eu.yaml", "plan", "--profile", ""],
      ["flowrules", "plan", "--config=eu.yaml", "--profile", "eu-t"],
    ]);
    expect(typed).toEqual(["other-one"]);
    expect(flagValue).toEqual(["other-one"]);
    expect(configured).toEqual(["eu-prod", "eu-test"]);
    expect(configuredEq).toEqual(["eu-test"]);
  });

  it("typedLine tells the verb and its paths from flags and their values", () => {
    const values = new Set(["--format", "--rule", "--log-format"]);
    expect(
      typedLine(["--log-format", "json", "plan", "a/", "--format", "json", "b.yaml", "-q", "--rule"], values),
    ).toEqual({ verb: "plan", paths: ["a/", "b.yaml"] });
    expect(typedLine(["--config", "x.yaml", "apply"], values)).toEqual({ verb: "apply", paths: [], config: "x.yaml" });
    expect(typedLine(["test", "--config=y.yaml", "r/"], values)).toEqual({
      verb: "test",
      paths: ["r/"],
      config: "y.yaml",
    });
    expect(typedLine([], values)).toEqual({ paths: [] });
  });

  it("__complete profiles reads flowrules.config.yaml here or $FLOWRULES_CONFIG, and a missing file is no names", async () => {
    const here = await runCli(["__complete", "profiles"], {}, { cwd: dir });
    expect(here.stdout.split("\n").filter(Boolean)).toEqual(["staging", "production"]);
    const other = join(dir, "other.yaml");
    await writeFile(other, "profiles:\n  eu: {}\n  us: {}\n");
    const viaEnv = await runCli(["__complete", "profiles"], { FLOWRULES_CONFIG: other }, { cwd: dir });
    expect(viaEnv.stdout.split("\n").filter(Boolean)).toEqual(["eu", "us"]);
    const none = await runCli(["__complete", "profiles"], {}, { cwd: tmpdir() });
    expect(none).toEqual({ code: 0, stdout: "", stderr: "" });
    const broken = await runCli(
      ["__complete", "profiles"],
      { FLOWRULES_CONFIG: join(dir, "rules", "r.yaml") },
      { cwd: dir },
    );
    expect(broken).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("every visible verb and flag of the program is in each script; the internal verb is not offered", async () => {
    const spec = completionSpec(buildProgram());
    expect(spec.verbs.map((v) => v.name)).toContain("completion");
    expect(spec.verbs.map((v) => v.name)).not.toContain("__complete");
    for (const shellName of ["bash", "zsh", "fish"] as const) {
      const text = COMPLETION_SHELLS[shellName](spec);
      for (const v of spec.verbs) {
        expect(text, `${shellName} ${v.name}`).toContain(v.name);
        for (const f of v.flags) {
          const name = shellName === "fish" ? `-l ${f.long?.slice(2) ?? ""}` : (f.long ?? f.short ?? "");
          expect(text, `${shellName} ${v.name} ${name}`).toContain(name);
        }
      }
    }
  });

  fish.it("fish completes a verb, a flag and a format choice in a real fish session", async () => {
    const file = await script("fish");
    const [verbs, flags, formats, rules] = await fishComplete(
      file,
      ["flowrules pl", "flowrules plan --ru", "flowrules plan --format ", "flowrules test --rule tidy"],
      dir,
      env,
    );
    expect(verbs).toEqual(["plan"]);
    expect(flags).toEqual(["--rule"]);
    expect(formats?.sort()).toEqual(["html", "json", "markdown", "text"]);
    expect(rules).toEqual(["tidy-onboardings"]);
  });

  zsh.it(
    "a scripted zsh session (a pseudo-terminal through zsh/zpty) completes a verb, a flag, format choices and rule names",
    async () => {
      const complete = await zshCompleter(await script("zsh"), dir, bin, env);
      expect(await complete("flowrules pl")).toEqual(["plan"]);
      expect(await complete("flowrules plan --form")).toEqual(["--format"]);
      expect(await complete("flowrules plan --format ")).toEqual(["html", "json", "markdown", "text"]);
      expect(await complete("flowrules test --rule appr")).toEqual(["approve-claims", "approve-orders"]);
      expect(await complete("flowrules --log-format json ex")).toEqual(["explain"]);
    },
  );

  zsh.it("zsh loads the script under compinit and defines the completion function for flowrules", async () => {
    const file = await script("zsh");
    const out = await shell("zsh", [
      "-f",
      "-c",
      `autoload -U compinit && compinit -u -D && source '${file}' && whence -w _flowrules && print -r -- $_comps[flowrules]`,
    ]);
    expect(out.split("\n").filter(Boolean)).toEqual(["_flowrules: function", "_flowrules"]);
  });
});

/**
 * Real bash, zsh and fish sessions for the completion tests: a `flowrules` on PATH that runs the built CLI (the scripts
 * call `flowrules __complete …` the way a user's shell does), the scripts as `flowrules completion <shell>` prints
 * them, and one way per shell to press Tab. A test that needs zsh or fish is written `needs("completion",
 * ["zsh"]).it(…)` (./programs.ts): skipped where the shell is missing, failing in CI (.ci/run installs them).
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { CLI, runCli } from "./cli.js";

const run = promisify(execFile);

export type ShellName = "bash" | "zsh" | "fish";

/** A folder holding an executable `flowrules` that runs the built CLI; put it first on PATH. */
export async function flowrulesBin(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "flowrules"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(join(bin, "flowrules"), 0o755);
  return bin;
}

/** The environment of a session: PATH with the bin folder first, HOME the test's folder. */
export function shellEnv(dir: string, bin: string): Record<string, string> {
  return { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: dir };
}

/** Runs a shell; a shell that is not installed fails the test with how to install it. */
export async function runShell(
  name: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<string> {
  try {
    const { stdout } = await run(name, args, { cwd, env, timeout: 60_000 });
    return stdout;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error(`${name} is not installed: apt-get install -y ${name} (.ci/run does this)`, { cause: err });
    throw err;
  }
}

/** The script `flowrules completion <shell>` prints, written to `<dir>/completion.<shell>`. */
export async function completionScript(shell: ShellName, dir: string): Promise<string> {
  const r = await runCli(["completion", shell], {}, { cwd: dir });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const file = join(dir, `completion.${shell}`);
  await writeFile(file, r.stdout);
  return file;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Completes each command line in one bash session: the words (the last one being completed) → the candidates. */
export async function bashComplete(
  file: string,
  lines: string[][],
  cwd: string,
  env: Record<string, string>,
): Promise<string[][]> {
  const calls = lines.map((words) => `at ${words.map(shq).join(" ")}`).join("\n");
  const out = await runShell(
    "bash",
    [
      "-c",
      `source ${shq(file)}
at() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _flowrules_complete; printf '%s\\n' "\${COMPREPLY[@]}" | sort; echo '--'; }
${calls}`,
    ],
    cwd,
    env,
  );
  return out
    .split("--\n")
    .slice(0, lines.length)
    .map((block) => block.split("\n").filter(Boolean));
}

/** Completes each line in one fish session (`complete -C`): the line → the candidates (descriptions dropped). */
export async function fishComplete(
  file: string,
  lines: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<string[][]> {
  const calls = lines.map((l) => `complete -C ${shq(l)}; echo @@`).join("; ");
  const out = await runShell("fish", ["-c", `source ${shq(file)}; ${calls}`], cwd, env);
  return out
    .split("@@\n")
    .slice(0, lines.length)
    .map((b) =>
      b
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[0] ?? ""),
    );
}

/**
 * Drives an interactive zsh in a pseudo-terminal: loads compinit and the script, wraps compadd to print each match
 * as HIT:<match>, presses Tab after the words, and prints the matches sorted. Every read blocks on the shell's own
 * output (markers it prints), so nothing here waits on the clock; a line must offer at least one match.
 */
const ZPTY_DRIVER = `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "mk=HIT; PS1='' RPS1=''; path=($2 \\$path); autoload -U compinit; compinit -u -D; source $1"
zpty -w z 'compadd() { local -a __m; builtin compadd -O __m "$@"; (( $#__m )) && print -rl -- \${^__m/#/\${mk}:} >/dev/tty; builtin compadd "$@"; }'
zpty -w z "print -r READY-''MARK"
out=""
while zpty -r z line; do [[ $line == *READY-MARK* ]] && break; done
zpty -n -w z "$3"$'\\t'
while zpty -r z line; do out+=$line; [[ $out == *HIT:* ]] && break; done
zpty -w z $'\\C-u'"print -r DONE-''MARK"
while zpty -r z line; do out+=$line; [[ $line == *DONE-MARK* ]] && break; done
print -r -- "$out" | tr -d '\\r' | grep -ao 'HIT:[^[:space:][:cntrl:]]*' | sort -u
zpty -d z
`;

/** A function completing one line in a fresh interactive zsh: the line → the matches offered. */
export async function zshCompleter(
  file: string,
  dir: string,
  bin: string,
  env: Record<string, string>,
): Promise<(line: string) => Promise<string[]>> {
  const driver = join(dir, "drive.zsh");
  await writeFile(driver, ZPTY_DRIVER);
  return async (line) =>
    (await runShell("zsh", ["-f", driver, file, bin, line], dir, env))
      .split("\n")
      .filter(Boolean)
      .map((l) => l.replace(/^HIT:/, ""));
}

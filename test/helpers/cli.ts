/** Runs the built CLI (dist/) as a child process, the way users and CI do. `npm test` builds first. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/cli/index.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** settles when the child has exited and its pipes are drained */
  done: Promise<CliResult & { signal: NodeJS.Signals | null }>;
}

/** Starts the CLI with only PATH and HOME inherited plus `env`; the caller may kill it mid-run. */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  opts: { cwd?: string; input?: string } = {},
): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  // decoded as streams: a character whose bytes two chunks share stays whole
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => (stdout += d));
  child.stderr?.on("data", (d: string) => (stderr += d));
  child.stdin?.end(opts.input);
  const done = new Promise<CliResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  opts: { cwd?: string; input?: string } = {},
): Promise<CliResult> {
  const { code, stdout, stderr } = await spawnCli(args, env, { ...opts, input: opts.input ?? "" }).done;
  return { code, stdout, stderr };
}

/**
 * The CLI after a line of shell set-up (`ulimit -f 8`, `exec 3>/dev/full`), as a shell user runs it: the set-up must
 * succeed, then bash `exec`s the CLI, so the limit or the descriptor is the CLI's own. Only PATH and HOME plus `env`.
 */
export function runCliInShell(
  setup: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  opts: { cwd?: string } = {},
): Promise<CliResult> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-c", `${setup} && exec ${quoted}`], {
      cwd: opts.cwd ?? process.cwd(),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (stdout += d));
    child.stderr.on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

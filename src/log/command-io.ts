import type { Logger } from "./types.js";

/** The edges a command touches, passed in so commands run the same in the CLI and in tests. */
export interface CommandIO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  /** stdout is a terminal (colours, on top of NO_COLOR) */
  stdoutIsTTY: boolean;
  /** colours asked for (`--color`) or refused (`--no-color`); absent: the terminal and NO_COLOR decide */
  color?: boolean;
  /** stderr is a terminal (progress) */
  stderrIsTTY: boolean;
  /** structured events (`--log-format`); absent means none are logged (src/log) */
  log?: Logger;
}

/** The process's own streams; the environment is the caller's (the CLI passes process.env, tests their own). */
export function processIO(env: NodeJS.ProcessEnv, color?: boolean): CommandIO {
  return {
    ...(color !== undefined ? { color } : {}),
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    env,
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
  };
}

/**
 * Colours as `--color` / `--no-color` say; without either, only on a terminal and never with NO_COLOR
 * (https://no-color.org) set to anything non-empty, nor on TERM=dumb.
 */
export function useColor(io: CommandIO): boolean {
  return io.color ?? (io.stdoutIsTTY && !io.env.NO_COLOR && io.env.TERM !== "dumb");
}

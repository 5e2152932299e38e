/** An in-memory CommandIO for running commands in-process. */
import type { CommandIO } from "../../src/log/command-io.js";
import type { Logger } from "../../src/log/index.js";

export interface MemoryIO extends CommandIO {
  out: () => string;
  err: () => string;
}

export function memoryIO(env: NodeJS.ProcessEnv = {}, log?: Logger): MemoryIO {
  let out = "";
  let err = "";
  return {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    env,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    ...(log ? { log } : {}),
    out: () => out,
    err: () => err,
  };
}

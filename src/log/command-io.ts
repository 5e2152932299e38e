import type { Logger } from "./types.js";

/** The edges a command touches, passed in so commands run the same in the CLI and in tests. */
export interface CommandIO {
  stdout: (s: string) => void;
  /**
   * A long output in pieces, each written when the reader has taken the ones before (a pipe's backpressure); absent,
   * the pieces go through `stdout` one by one (streamToStdout)
   */
  stdoutPieces?: (pieces: Iterable<string>) => Promise<void>;
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
    stdoutPieces: (pieces) => writePieces(process.stdout, pieces),
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

/** A view that may come in pieces (the JSON plan) to stdout, a piece at a time as the reader takes them. */
export async function streamToStdout(io: CommandIO, view: string | Iterable<string>): Promise<void> {
  if (typeof view === "string") io.stdout(view);
  else if (io.stdoutPieces) await io.stdoutPieces(view);
  else for (const piece of view) io.stdout(piece);
}

/**
 * Writes pieces to a stream, waiting for `drain` whenever the stream's buffer is full: a pipe to a slow reader holds
 * the writer back instead of queuing the whole output in memory (Node queues what a pipe has not taken yet). A
 * stream that fails or closes (the reader went away: `| head`) ends the writing, as a lost write to stdout does.
 */
export async function writePieces(stream: NodeJS.WritableStream, pieces: Iterable<string>): Promise<void> {
  const s = stream as NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean };
  for (const piece of pieces) {
    if (s.destroyed === true || s.writableEnded === true) return;
    if (stream.write(piece)) continue;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stream.off("drain", done);
        stream.off("close", done);
        stream.off("error", done);
        resolve();
      };
      stream.on("drain", done);
      stream.on("close", done);
      stream.on("error", done);
    });
  }
}

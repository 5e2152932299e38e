/**
 * Attaches a logger to a command's I/O. With a structured (json) logger, every plain line a command still writes to
 * stderr (progress, warnings, lock notices) becomes a `message` event, so stderr stays one JSON object per line
 * without touching each call site; terminal-only progress (\r redraws) is turned off.
 */
import type { CommandIO } from "./command-io.js";
import type { Logger } from "./types.js";

export function withLogger(io: CommandIO, log: Logger): CommandIO {
  if (!log.structured) return { ...io, log };
  let pending = "";
  const stderr = (s: string): void => {
    pending += s;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      // a \r-redrawn progress line keeps only its last state
      const text = (line.split("\r").pop() ?? "").trimEnd();
      if (text !== "") log.event("message", { text });
    }
  };
  return { ...io, stderr, stderrIsTTY: false, log };
}

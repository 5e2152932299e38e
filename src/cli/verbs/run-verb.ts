/**
 * The heavy half of a verb (./define.ts is the light one): parse what commander collected with zod, one message for
 * all that is wrong; build the IO with its logger (--log-format, --color, every resolved API key scrubbed); run the
 * command logged as `run.started` / `run.finished`; set the exit code. A verb's run.ts is `verbRun({ … })`.
 */
import type { Command } from "commander";
import { z } from "zod";
import type { CommandIO } from "../../log/command-io.js";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { interruptions, type InterruptionOptions } from "../signals.js";

export { verbIO } from "./io.js";

/**
 * A zod parse whose failure is the user's, said in one line: a verb's own words (a custom issue, "--last must be …")
 * as they are, zod's own after "invalid options:".
 */
export function parseOrRefuse<S extends z.ZodType>(schema: S, value: unknown, what = "options"): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const own = parsed.error.issues.filter((i) => i.code === "custom").map((i) => i.message);
  const other = parsed.error.issues.filter((i) => i.code !== "custom").map((i) => i.message);
  throw new UserError([...own, ...(other.length > 0 ? [`invalid ${what}: ${other.join("; ")}`] : [])].join("; "));
}

/** A whole number typed as a flag's text, at least `min`; `words` is the refusal ("--last must be …"), the text quoted after it. */
export function wholeFlag(min: number, words: string): z.ZodType<number, string> {
  return z.string().transform((text, ctx) => {
    if (/^\d+$/.test(text) && Number(text) >= min) return Number(text);
    ctx.addIssue({ code: "custom", message: `${words}; got "${text}"` });
    return z.NEVER;
  });
}

/** What a verb's settings step hands back: the IO, the fields of `run.started`, and the command to run. */
export interface VerbStart {
  io: CommandIO;
  fields: Record<string, unknown>;
  /** `signal`: aborted by the first SIGINT/SIGTERM when `stops` is given (../signals.ts), else never */
  exec: (io: CommandIO, signal: AbortSignal) => Promise<number>;
  /** a verb that stops in its own way on a signal (plan, apply, watch): the handlers are installed, and removed when it ends */
  stops?: InterruptionOptions;
}

/** What the settings step of a verb is given: its arguments and flags parsed, the raw flags for the settings table. */
export interface VerbInput<A, F> {
  args: A;
  flags: F;
  raw: Record<string, unknown>;
  command: Command;
  env: NodeJS.ProcessEnv;
}

export interface VerbSpec<A extends z.ZodType, F extends z.ZodType> {
  name: string;
  /** the positional arguments, in order (a z.tuple) */
  args: A;
  /** the verb's own flags (the settings of the table are read from `raw` by ../settings.ts) */
  flags: F;
  start: (input: VerbInput<z.infer<A>, z.infer<F>>) => Promise<VerbStart> | VerbStart;
}

/** The `run` a verb's run.ts exports. */
export function verbRun<A extends z.ZodType, F extends z.ZodType>(
  spec: VerbSpec<A, F>,
): (command: Command) => Promise<void> {
  return async (command) => {
    const raw = command.opts();
    const args = parseOrRefuse(spec.args, command.processedArgs, "arguments");
    const flags = parseOrRefuse(spec.flags, raw);
    const started = await spec.start({ args, flags, raw, command, env: process.env });
    const stops = started.stops ? interruptions(started.io, started.stops) : undefined;
    try {
      process.exitCode = await runLogged(started.io, spec.name, started.fields, (io) =>
        started.exec(io, stops?.signal ?? new AbortController().signal),
      );
    } finally {
      stops?.dispose();
    }
  };
}

/** Verbs without positional arguments. */
export const NoArgs = z.tuple([]);
/** `[paths...]` */
export const Paths = z.tuple([z.array(z.string())]);
/** A repeatable flag: commander collects it into an array (default []). */
export const Repeated = z.array(z.string()).default([]);

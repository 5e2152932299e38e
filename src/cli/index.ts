#!/usr/bin/env node
/**
 * flowrules command-line entry. Errors reach the user as one line, never as a stack trace.
 *
 * Every run builds the program (commander and each verb's flags) and loads what its verb does when that verb runs:
 * `--help` loads nothing else; `--version` alone and a completion Tab not even the program (./tab.ts), and the error
 * path loads its formatting when there is an error (docs/performance.md, "Start-up").
 */
import { UserError, EXIT_ERROR } from "../model/errors.js";
import { answerTab } from "./tab.js";
import { failIfUnfinished } from "./unfinished.js";

/**
 * A reader that goes away (`flowrules plan | head`, a killed `tee`) makes writes fail with EPIPE. Unhandled, that
 * kills the process with a stack trace — in the middle of an apply. Output nobody reads is dropped instead, and the
 * run finishes (its journal, lock and exit code unaffected).
 */
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);

/**
 * Stop signals that come before a verb installs its handlers (./signals.ts) — while its modules load — are kept for
 * it, so SIGTERM in the first moments of `watch` is a clean stop, not a kill (exit 143). A run whose verb installs
 * none leaves with the signal as if there had been no handler (`releaseEarlySignals`). Here, not in a module of its
 * own, so that `--version` and a Tab load nothing more (test/cli/startup.test.ts).
 */
const early: NodeJS.Signals[] = [];
const keepSignal = (sig: NodeJS.Signals): void => void early.push(sig);
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
for (const sig of STOP_SIGNALS) process.on(sig, keepSignal);
/** Hands the signals kept so far to the verb's handlers (./signals.ts), which take over from here. */
function takeEarlySignals(): NodeJS.Signals[] {
  for (const sig of STOP_SIGNALS) process.off(sig, keepSignal);
  return early.splice(0);
}
(globalThis as Record<symbol, unknown>)[Symbol.for("flowrules.takeEarlySignals")] = takeEarlySignals;
/** No verb takes them: a signal kept is delivered again with no handler left, so it ends the process as usual. */
function releaseEarlySignals(): void {
  const [first] = takeEarlySignals();
  if (first) process.kill(process.pid, first);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (await answerTab(args)) return;
  // `flowrules --version` alone prints what commander would, without building the program (test/cli/startup.test.ts)
  const { VERSION, VERSION_FLAGS } = await import("../model/version.js");
  if (args.length === 1 && VERSION_FLAGS.some((f) => f === args[0])) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const [{ CommanderError }, { buildProgram }, { preferSmallHeap }] = await Promise.all([
    import("commander"),
    import("./program.js"),
    import("./heap.js"),
  ]);
  const program = buildProgram();
  program.exitOverride();
  // the heap setting is for a verb's run (./heap.ts); --version, --help and a Tab are over before it would matter
  program.hook("preAction", (_program, verb) => {
    // only the verbs that talk to the service install stop handlers (./signals.ts); the others take none
    if (!["plan", "apply", "watch", "forecast"].includes(verb.name())) releaseEarlySignals();
    void preferSmallHeap();
  });
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version are "errors" to commander; their text is already printed
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_ERROR;
      return;
    }
    process.exitCode = err instanceof UserError ? err.exitCode : EXIT_ERROR;
    await reportFailure(err, program.opts<{ logFormat?: string }>().logFormat === "json");
  }
}

/** One line on stderr (a JSON event with --log-format json), the API key scrubbed. */
async function reportFailure(err: unknown, json: boolean): Promise<void> {
  const [{ formatError }, { createLogger }, { redactor }, { envKey, runSecrets }] = await Promise.all([
    import("./errors.js"),
    import("../log/index.js"),
    import("../log/redact.js"),
    // the same module a verb resolved its key in, so it knows that key (none when no verb got that far)
    import("./trust.js"),
  ]);
  const secrets = [envKey(process.env), ...runSecrets()];
  if (json) {
    // with --log-format json every stderr line is a JSON event, the failure too
    const log = createLogger({ format: "json", write: (s) => process.stderr.write(s), secrets });
    log.event("run.failed", { message: formatError(err), exit_code: process.exitCode }, "error");
    return;
  }
  // the last line of defence, as the loggers are: no error text carries the key (a swapped variable, a server echo)
  process.stderr.write(`flowrules: ${redactor(secrets)(formatError(err))}\n`);
}

let settled = false;
failIfUnfinished(
  () => settled,
  (s) => process.stderr.write(s),
);
void main().finally(() => {
  settled = true;
  // a signal no verb took (--help, a Tab, a run that failed before its handlers): delivered now
  releaseEarlySignals();
});

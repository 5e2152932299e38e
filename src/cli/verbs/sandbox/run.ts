/**
 * What `flowrules sandbox` does when it runs (its flags: ./flags.ts): start the simulated service until a signal. It
 * is no run of the service's verbs (no `run.started`, no settings), so it parses its flags with ../run-verb.ts alone.
 */
import type { Command } from "commander";
import { z } from "zod";
import { parseOrRefuse } from "../run-verb.js";
import { parseQuirks } from "../../../sandbox/quirks.js";
import { startSandbox, USERS, describeUser, type SandboxOptions } from "../../../sandbox/index.js";
import { UserError } from "../../../model/errors.js";
import { commandLogger } from "../../../log/index.js";
import { errorMessage } from "../../../model/guards.js";
import { profileHint } from "../../../sandbox/hints.js";
import { plural } from "../../../text/plural.js";

/** Every flag is text (commander's), read below: three with defaults, the rest optional. */
const Text = z.string();
const Maybe = Text.optional();
const Flags = z.object({
  port: Text,
  instances: Text,
  seed: Text,
  latency: Maybe,
  failRate: Maybe,
  rateLimit: Maybe,
  resetRate: Maybe,
  quirks: Maybe,
  people: Maybe,
});
type SandboxFlags = z.infer<typeof Flags>;

export async function run(command: Command): Promise<void> {
  const flags = parseOrRefuse(Flags, command.opts());
  const log = commandLogger(command);
  const opts = parseFlags(flags);
  const service = await startSandbox(opts).catch((err: unknown) => {
    throw new UserError(`cannot start the sandbox: ${errorMessage(err)}`);
  });
  const out = (s: string): boolean => process.stdout.write(`${s}\n`);
  out(`flowrules sandbox: ${plural(service.store.size, "instance")} (seed ${opts.seed ?? 1})`);
  out(`base URL: ${service.baseUrl}`);
  if (service.quirks.length > 0) out(`quirks: ${service.quirks.join(", ")}`);
  if (opts.peoplePerMin)
    out(`people at work: ${opts.peoplePerMin} changes a minute (POST ${service.origin}/__sandbox/people for more)`);
  out("demo keys (local use only):");
  for (const u of USERS) out(`  ${u.key.padEnd(18)} ${describeUser(u)}`);
  out(
    "use it from flowrules: this profile in flowrules.config.yaml (default_profile: sandbox, or --profile sandbox), as in the README's tour:",
  );
  for (const line of profileHint(service.baseUrl, opts.rateLimitPerMin ?? 0)) out(`  ${line}`);
  out("try:");
  out(`  curl -H 'Authorization: Api-Key sandbox-admin' ${service.baseUrl}/processes/`);
  out(`request log: ${service.origin}/__sandbox/requests`);
  out("Ctrl-C to stop.");
  log.event("sandbox.started", { base_url: service.baseUrl, instances: service.store.size, seed: opts.seed ?? 1 });
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void service.close().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  if (log.structured) log.event("sandbox.stopped", { base_url: service.baseUrl });
  else process.stderr.write("flowrules sandbox: stopped.\n");
}

function parseFlags(flags: SandboxFlags): SandboxOptions {
  const int = (name: string, raw: string, min: number, max: number): number => {
    if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
      throw new UserError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const rate = (name: string, raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1)
      throw new UserError(`--${name} must be a number from 0 to 1, got "${raw}"`);
    return n;
  };
  const seedText = flags.seed.trim();
  if (!/^-?\d+$/.test(seedText) || !Number.isSafeInteger(Number(seedText))) {
    throw new UserError(`--seed must be a whole number, got "${flags.seed}"`);
  }
  return {
    port: int("port", flags.port, 0, 65535),
    instances: int("instances", flags.instances, 0, 1_000_000),
    seed: Number(seedText),
    latencyMs: flags.latency === undefined ? undefined : int("latency", flags.latency, 0, 600_000),
    failRate: flags.failRate === undefined ? undefined : rate("fail-rate", flags.failRate),
    rateLimitPerMin: flags.rateLimit === undefined ? undefined : int("rate-limit", flags.rateLimit, 0, 1_000_000),
    resetRate: flags.resetRate === undefined ? undefined : rate("reset-rate", flags.resetRate),
    quirks: flags.quirks === undefined ? undefined : quirks(flags.quirks),
    peoplePerMin: flags.people === undefined ? undefined : int("people", flags.people, 0, 1_000_000),
  };
}

function quirks(raw: string): string[] {
  try {
    return parseQuirks(raw);
  } catch (err) {
    throw new UserError(`--quirks: ${errorMessage(err)}`);
  }
}

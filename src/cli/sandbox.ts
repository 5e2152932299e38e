/** `flowrules sandbox`: commander wiring only; the service itself lives in src/sandbox. */
import type { Command } from "commander";
// the quirk names are needed for --help; the sandbox itself loads when it starts
import { QUIRK_NAMES, parseQuirks } from "../sandbox/quirks.js";
import type { SandboxOptions } from "../sandbox/index.js";
import { UserError } from "../model/errors.js";
import { commandLogger } from "../log/index.js";
import { errorMessage } from "../model/guards.js";
import { plural } from "../model/plural.js";

interface SandboxFlags {
  port: string;
  instances: string;
  seed: string;
  latency?: string;
  failRate?: string;
  rateLimit?: string;
  resetRate?: string;
  quirks?: string;
  people?: string;
}

export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description("run a local, simulated Workflow Instance Service with demo data (until Ctrl-C)")
    .option("--port <n>", "port on 127.0.0.1 (0 = a free port)", "4010")
    .option("--instances <n>", "number of demo instances", "200")
    .option("--seed <n>", "seed of the demo data and of the fault draws", "1")
    .option("--latency <ms>", "delay before answering each request, in milliseconds")
    .option("--fail-rate <r>", "share of requests (0–1) answered 503")
    .option("--rate-limit <per_min>", "requests a minute per key before 429 with Retry-After (0 = off)")
    .option("--reset-rate <r>", "share of mutations (0–1) applied and then answered by closing the connection")
    .option("--people <per_min>", "simulated people change this many instances a minute (edits, steps, aborts, starts, deadlines)")
    .option("--quirks <list>", `answer as a real service does, comma-separated: ${QUIRK_NAMES.join(", ")} (see README "Real services")`)
    .action(async (flags: SandboxFlags, command: Command) => {
      const log = commandLogger(command);
      const opts = parseFlags(flags);
      const { startSandbox, USERS, describeUser } = await import("../sandbox/index.js");
      const sandbox = await startSandbox(opts).catch((err: unknown) => {
        throw new UserError(`cannot start the sandbox: ${errorMessage(err)}`);
      });
      const out = (s: string): boolean => process.stdout.write(`${s}\n`);
      out(`flowrules sandbox: ${plural(sandbox.store.size, "instance")} (seed ${opts.seed ?? 1})`);
      out(`base URL: ${sandbox.baseUrl}`);
      if (sandbox.quirks.length > 0) out(`quirks: ${sandbox.quirks.join(", ")}`);
      if (opts.peoplePerMin) out(`people at work: ${opts.peoplePerMin} changes a minute (POST ${sandbox.origin}/__sandbox/people for more)`);
      out("demo keys (local use only):");
      for (const u of USERS) out(`  ${u.key.padEnd(18)} ${describeUser(u)}`);
      out("try:");
      out(`  curl -H 'Authorization: Api-Key sandbox-admin' ${sandbox.baseUrl}/processes/`);
      out(`request log: ${sandbox.origin}/__sandbox/requests`);
      out("Ctrl-C to stop.");
      log.event("sandbox.started", { base_url: sandbox.baseUrl, instances: sandbox.store.size, seed: opts.seed ?? 1 });
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          void sandbox.close().then(resolve);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      if (log.structured) log.event("sandbox.stopped", { base_url: sandbox.baseUrl });
      else process.stderr.write("flowrules sandbox: stopped.\n");
    });
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
    if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new UserError(`--${name} must be a number from 0 to 1, got "${raw}"`);
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

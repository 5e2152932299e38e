/** `flowrules sandbox`: its flags; the service itself (src/sandbox) loads when it starts, in ./run.ts. */
import type { Command } from "commander";
// the quirk names are needed for --help; the sandbox itself loads when it starts
import { QUIRK_NAMES } from "../../../sandbox/quirks.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerSandbox(program: Command): void {
  const cmd = verbCommand(program, "sandbox", {
    description: "run a local, simulated Workflow Instance Service with demo data (until Ctrl-C)",
  })
    .option("--port <n>", "port on 127.0.0.1 (0 = a free port)", "4010")
    .option("--instances <n>", "number of demo instances", "200")
    .option("--seed <n>", "seed of the demo data and of the fault draws", "1")
    .option("--latency <ms>", "delay before answering each request, in milliseconds")
    .option("--fail-rate <r>", "share of requests (0–1) answered 503")
    .option("--rate-limit <per_min>", "requests a minute per key before 429 with Retry-After (0 = off)")
    .option("--reset-rate <r>", "share of mutations (0–1) applied and then answered by closing the connection")
    .option(
      "--people <per_min>",
      "simulated people change this many instances a minute (edits, steps, aborts, starts, deadlines)",
    )
    .option(
      "--quirks <list>",
      `answer as a real service does, comma-separated: ${QUIRK_NAMES.join(", ")} (see README "Real services")`,
    );
  defineVerb(cmd, () => import("./run.js"));
}

/** `flowrules watch`: its flags; what it does when it runs (flags to settings, signals, the loop) is ./run/watch.ts. */
import type { Command } from "commander";
import { DEFAULT_BUDGET_PERCENT } from "../watch/settings.js";
import { addConnectionOptions } from "./connection.js";
import { addPlanningOptions } from "./flags.js";
import { addNotifyOption } from "./operations.js";

export function registerWatch(program: Command): void {
  const cmd = program
    .command("watch")
    .description("run cycles of plan (and with --apply, apply) until stopped, polling for what changed within a share of the rate limit")
    .argument("[paths...]", "rule files or folders", ["rules/"])
    .option("--apply", "apply each cycle's enforce changes exactly once (without it, only log what it would do)")
    .option("--interval <duration>", "poll interval (10s, 1m); default derived from --budget, never below 5 s")
    .option("--budget <percent>", `share of the rate limit idle polling may use (default ${DEFAULT_BUDGET_PERCENT})`)
    .option("--metrics-port <n>", "serve GET /metrics (Prometheus) and GET /healthz on this port (0 = any free port)")
    .option("--metrics-host <host>", "address of the metrics endpoint (default 127.0.0.1)");
  // the planning flags of `plan` and `apply --auto-approve`; --state is required here (the watcher's folder)
  addPlanningOptions(cmd, "plan");
  addNotifyOption(cmd);
  addConnectionOptions(cmd).action(async (paths: string[], raw: Record<string, unknown>, command: Command) =>
    (await import("./run/watch.js")).watch(paths, raw, command),
  );
}

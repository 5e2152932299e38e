/** `flowrules apply`: its flags; what it does when it runs (prompt, signals, the apply) is ./run/apply.ts, loaded then. */
import { Option, type Command } from "commander";
import { APPLY_FORMAT_NAMES } from "../render/format-names.js";
import { DEFAULT_BATCH_SIZE, DEFAULT_CLOCK_SKEW_MS, DEFAULT_LOCK_FILE, DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_RECHECK_EVERY_MS, MAX_BATCH_SIZE } from "../model/defaults.js";
import { addConnectionOptions } from "./connection.js";
import { addPlanningOptions } from "./flags.js";
import { addNotifyOption } from "./operations.js";

export function registerApply(program: Command): void {
  const cmd = program
    .command("apply")
    .description("execute a saved plan exactly once, or plan and apply rules with --auto-approve")
    .argument("[paths...]", "a plan.json, or rule files/folders (with --auto-approve, or confirmed on a terminal)", ["rules/"])
    .option("--auto-approve", "plan the rules and apply without asking (for schedules)")
    .option("--journal <file>", "journal file (default: <plan>.journal.jsonl beside the plan)")
    .option("--batch-size <n>", `ids per bulk abort request (default ${DEFAULT_BATCH_SIZE}, at most ${MAX_BATCH_SIZE})`)
    .option("--lock-file <file>", `lock against concurrent applies (default ${DEFAULT_LOCK_FILE})`)
    .option("--lock-timeout <duration>", `a lock of another host whose heartbeat stopped this long ago is stale: minutes, or 90s / 30m / 2h (default ${DEFAULT_LOCK_TIMEOUT_MS / 60_000}m); a live apply on this host is never taken over`)
    .option("--recheck-every <seconds>", `judge staleness again at least this often while sending changes (default ${DEFAULT_RECHECK_EVERY_MS / 1000})`)
    .option("--lock-wait <duration>", "while another apply holds the lock, wait this long for it to finish (90s, 10m) instead of refusing at once")
    .option("--max-duration <duration>", "start no change after this long (90s, 14m, 2h); the rest are deferred and the same apply again resumes them")
    .option("--clock-skew <seconds>", `assumed bound on the clock difference with the service, for staleness (default ${DEFAULT_CLOCK_SKEW_MS / 1000})`)
    .option("--detailed-exitcode", "exit 0 when nothing was applied, 2 when changes were applied, 1 on any stale or failed change")
    .option("-q, --quiet", "no progress on stderr")
    .addOption(new Option("--format <format>", "the result on stdout: text, or json (one document, schemas/apply-result.schema.json)").choices(APPLY_FORMAT_NAMES).default("text"));
  addPlanningOptions(cmd, "apply");
  addNotifyOption(cmd);
  addConnectionOptions(cmd).action(async (paths: string[], raw: Record<string, unknown>, command: Command) =>
    (await import("./run/apply.js")).apply(paths, raw, command),
  );
}

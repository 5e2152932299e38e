import { Option, type Command } from "commander";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import { processIO } from "../log/command-io.js";
import { parseShard } from "../plan/shard.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { addConnectionOptions, connectionSettings } from "./connection.js";
import { addNotifyOption, addOptOutOption, notifyTargets, optOutTag } from "./operations.js";

/** `plan --compare` is its own command module, loaded only when asked for. */
async function planVerb(compare: string | undefined) {
  return compare !== undefined ? (await import("../commands/plan-compare.js")).comparePlanCommand : (await import("../commands/plan.js")).planCommand;
}

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function registerPlan(program: Command): void {
  const cmd = program
    .command("plan")
    .description("show the API calls the rules imply against live data (dry run)")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(new Option("--format <format>", "output format").choices(Object.keys(PLAN_FORMATS)).default("text"))
    .option("--out <file>", "also write the JSON plan to this file (for `flowrules apply <file>`)")
    .option("--report-dir <dir>", "also write each report as <rule>.csv and <rule>.json into this folder")
    .option("--detailed-exitcode", "exit 0 when there is nothing to change, 2 when there are changes, 1 on error")
    .option("--rule <name>", "plan only this rule; a glob such as 'approve-*' selects several (repeatable)", collect, [])
    .option("-q, --quiet", "no progress and no request count on stderr")
    .option("--shard <i/n>", "plan only the instances with id % n == i (n workers share one rule set), e.g. 0/4")
    .option("--changed-since <git-ref>", "plan only the rules added or edited since this git ref; list removed ones")
    .option("--compare <git-ref>", "show what the rule edits since this git ref change: both versions of each added, edited or removed rule planned in one run")
    .option("--explain-requests", "say on stderr why each list, field page or record read is made (or saved)")
    .option("--workflows <file>", "workflow catalog to compare the live workflows with (default flowrules.workflows.json)");
  addNotifyOption(addOptOutOption(cmd));
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
    const io = withLogger(processIO(), commandLogger(command));
    const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
    const changedSince = typeof opts.changedSince === "string" ? opts.changedSince : undefined;
    const compare = typeof opts.compare === "string" ? opts.compare : undefined;
    const connection = connectionSettings(opts, io.env, shard);
    const optOut = optOutTag(opts, io.env);
    const urls = notifyTargets(opts, io.env, connection.insecureHttp);
    const fields = { paths, base_url: connection.baseUrl, ...(opts.shard ? { shard: opts.shard } : {}), ...(changedSince ? { changed_since: changedSince } : {}), ...(compare !== undefined ? { compare } : {}) };
    process.exitCode = await runLogged(io, "plan", fields, async (io) => (await planVerb(compare))(
      {
        paths,
        format: opts.format as PlanFormat,
        ...(typeof opts.out === "string" ? { out: opts.out } : {}),
        ...(typeof opts.reportDir === "string" ? { reportDir: opts.reportDir } : {}),
        detailedExitcode: opts.detailedExitcode === true,
        rules: (opts.rule as string[] | undefined) ?? [],
        quiet: opts.quiet === true,
        connection,
        ...(shard ? { shard } : {}),
        ...(changedSince ? { changedSince } : {}),
        ...(compare !== undefined ? { compare } : {}),
        ...(opts.explainRequests === true ? { explainRequests: true } : {}),
        ...(optOut ? { optOutTag: optOut } : {}),
        ...(urls.length > 0 ? { notify: { urls } } : {}),
        ...(typeof opts.workflows === "string" ? { workflows: opts.workflows } : {}),
      },
      io,
    ));
  });
}

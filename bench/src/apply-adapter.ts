/**
 * The one place the benchmark calls the apply engine: `applyCommand`, the function behind `flowrules apply
 * plan.json` — every plan-file check, the lock, the journal, the staleness list, complete_step calls, bulk aborts of
 * 100 (the default) — with the CLI's output captured instead of printed. Whether the changes took effect is checked
 * by the orchestrator on the sandbox's own data, not taken from this summary.
 */
import { applyCommand } from "#flowrules/commands/apply.js";
import type { CommandIO } from "#flowrules/log/command-io.js";

export interface ApplyRun {
  planFile: string;
  /** where `.flowrules/` (the lock) goes */
  workDir: string;
  baseUrl: string;
  apiKey: string;
  concurrency: number;
}

export interface ApplyRunResult {
  /** 0 = every change applied (the CLI's exit code) */
  exitCode: number;
  /** the closing summary `flowrules apply` prints */
  summary: string;
}

export async function applyPlanFile(run: ApplyRun): Promise<ApplyRunResult> {
  let summary = "";
  const io: CommandIO = {
    stdout: (s) => {
      summary += s;
    },
    stderr: () => undefined,
    env: {},
    stdoutIsTTY: false,
    stderrIsTTY: false,
  };
  const exitCode = await applyCommand(
    {
      paths: [run.planFile],
      autoApprove: false,
      detailedExitcode: false,
      quiet: true,
      rules: [],
      cwd: run.workDir,
      connection: {
        baseUrl: run.baseUrl,
        apiKey: run.apiKey,
        rateLimitPerMin: 0,
        concurrency: run.concurrency,
        timeoutMs: 30_000,
        insecureHttp: false,
      },
    },
    io,
  );
  return { exitCode, summary };
}

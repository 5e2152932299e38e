/** Rule-test results as events: one `test.case` per case (failed ones at error level), then `tests.finished`. */
import { counts, type TestRun } from "../../rule-tests/types.js";
import type { Logger } from "../../log/types.js";

export function logTestRun(log: Logger, run: TestRun): void {
  for (const r of run.results) {
    log.event(
      "test.case",
      {
        name: r.name,
        rules: r.rules,
        status: r.status,
        file: r.pos.file,
        line: r.pos.line,
        ...(r.failures.length > 0 ? { failures: r.failures.length } : {}),
      },
      r.status === "pass" ? "info" : "error",
    );
  }
  log.event("tests.finished", { files: run.files.length, ...counts(run) });
}

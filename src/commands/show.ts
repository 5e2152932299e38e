/**
 * `flowrules show <plan.json>`: a saved plan in any plan format, without a request. The pull-request workflow writes
 * plan.json once and renders it again as HTML, so reviewers read the very plan `apply` will execute, and the service
 * is asked once (docs/plan-review.md).
 */
import { loadPlanFile } from "../plan/read.js";
import { readTopLevelKeys } from "../plan/stream-read.js";
import { CompareKeysSchema } from "../plan/compare-schema.js";
import { COMPARE_FORMATS } from "../render/compare/index.js";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import { EXIT_OK } from "../model/errors.js";
import { useColor, type CommandIO } from "../log/command-io.js";

export interface ShowCommandOptions {
  file: string;
  format: PlanFormat;
}

export async function showCommand(opts: ShowCommandOptions, io: CommandIO): Promise<number> {
  // every check of a plan file but the base URL (nothing is sent) and recorded planning errors (they are shown)
  const { plan } = await loadPlanFile(opts.file, "", undefined, { toShow: true });
  const options = { color: useColor(io), planFile: opts.file };
  // a `plan --compare` file (its digest, checked above, covers these keys too) is shown with its impact first
  const compared = CompareKeysSchema.safeParse(await readTopLevelKeys(opts.file, ["compare", "impact"]));
  io.stdout(
    compared.success
      ? COMPARE_FORMATS[opts.format]({ ...plan, ...compared.data }, options)
      : PLAN_FORMATS[opts.format](plan, options),
  );
  return EXIT_OK;
}

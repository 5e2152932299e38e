/** What every view of an apply's result reads: the outcomes of a run, or a plan with nothing to send. */
import type { Plan, PlannedChange } from "../../plan/types.js";
import type { RequestStats } from "../../api/index.js";
import type { StalenessCheck } from "../../apply/types.js";
import type { ChangeOutcome } from "../../apply/outcome.js";

export interface SummaryInput {
  outcomes: ChangeOutcome[];
  stats: RequestStats;
  journalFile: string;
  planFile: string;
  /** instances listed as changed since the plan / read to check */
  listedAsChanged: number;
  readToCheck: number;
  /** the staleness checks of the run, in order */
  checks?: StalenessCheck[];
  /** the --max-duration of the run, as given ("14m"), when there was one */
  maxDuration?: string;
  /** the plan's rules and names: the lines of its changes name steps beside their ids (./changes.ts) */
  plan?: Pick<Plan, "rules" | "names">;
  /** the run was stopped (SIGTERM, SIGINT): the changes it did not start are deferred */
  stopped?: boolean;
}

export type ApplyReport =
  | ({ kind: "applied"; baseUrl: string; audit: PlannedChange[] } & SummaryInput)
  | { kind: "nothing"; baseUrl: string; audit: PlannedChange[] }
  /** stopped before settling any change: a refused plan, rules that do not load, the lock held, a "no" */
  | { kind: "not_applied"; baseUrl: string; audit: PlannedChange[]; error: string };

export type ApplyFormatter = (report: ApplyReport) => string;

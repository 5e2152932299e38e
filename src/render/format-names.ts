/**
 * The names of every view's formats (and of the completion shells), apart from the renderers: `--help`, `--format`'s
 * choices and a completion Tab need the names, not the code, and load only this file (docs/performance.md,
 * "Start-up"). Each registry (`src/render/<verb>/index.ts`) `satisfies Record<Name, Formatter>`, so a name without a
 * renderer, or a renderer without a name, does not compile. The order is the order `--help` lists them in.
 */
export const PLAN_FORMAT_NAMES = ["text", "markdown", "json", "html"] as const;
export type PlanFormat = (typeof PLAN_FORMAT_NAMES)[number];

export const DIAGNOSTIC_FORMAT_NAMES = ["text", "json", "github"] as const;
export type DiagnosticFormat = (typeof DIAGNOSTIC_FORMAT_NAMES)[number];

export const APPLY_FORMAT_NAMES = ["text", "json"] as const;
export type ApplyFormat = (typeof APPLY_FORMAT_NAMES)[number];

export const TEST_RESULT_FORMAT_NAMES = ["text", "json"] as const;
export type TestResultsFormat = (typeof TEST_RESULT_FORMAT_NAMES)[number];

export const EXPLAIN_FORMAT_NAMES = ["text", "json"] as const;
export type ExplainFormat = (typeof EXPLAIN_FORMAT_NAMES)[number];

export const WORKFLOWS_FORMAT_NAMES = ["text", "json"] as const;
export type WorkflowsFormat = (typeof WORKFLOWS_FORMAT_NAMES)[number];

export const DESCRIBE_FORMAT_NAMES = ["text", "json", "yaml"] as const;
export type DescribeFormat = (typeof DESCRIBE_FORMAT_NAMES)[number];

export const STATE_FORMAT_NAMES = ["text", "json"] as const;
export type StateFormat = (typeof STATE_FORMAT_NAMES)[number];

export const HISTORY_FORMAT_NAMES = ["text", "json"] as const;
export type HistoryFormat = (typeof HISTORY_FORMAT_NAMES)[number];

export const COMPLETION_SHELL_NAMES = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof COMPLETION_SHELL_NAMES)[number];

export const CONFIG_FORMAT_NAMES = ["text", "json"] as const;
export type ConfigFormat = (typeof CONFIG_FORMAT_NAMES)[number];

export const FORECAST_FORMAT_NAMES = ["text", "json", "markdown", "html"] as const;
export type ForecastFormat = (typeof FORECAST_FORMAT_NAMES)[number];

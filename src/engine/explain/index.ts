/** Why one instance matches a rule or not: used by `flowrules explain` and by failing rule tests. */
export { explainRule, type ExplainOptions } from "./explain-rule.js";
export { checkFilters, selectionResult } from "./filters.js";
export { explainWhen, decidingClauses } from "./clauses.js";
export { splitClauses, type ClauseNode } from "./split.js";
export { instanceFromRecord, workflowIdOf, snapshotValues } from "./from-record.js";
export type * from "./types.js";

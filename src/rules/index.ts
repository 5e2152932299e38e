/** The rule language: load, validate and compile YAML rule files for the engine. */
export { loadRules, compileSources, DEFAULT_RULE_PATHS, MAX_RULES_PER_RUN, type LoadOptions, type RuleSource } from "./load.js";
export { listRuleFiles, isRuleFileName } from "./files.js";
export type * from "./types.js";
export { ruleSelection, unmatchedMessage, isGlob, type RuleSelection } from "./rule-patterns.js";

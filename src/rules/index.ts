/** The rule language: load, validate and compile YAML rule files for the engine. */
export { loadRules, DEFAULT_RULE_PATHS, type LoadOptions } from "./load.js";
export { buildRulesSchema, SCHEMA_ID } from "./schema.js";
export { listRuleFiles, isRuleFileName } from "./files.js";
export type * from "./types.js";

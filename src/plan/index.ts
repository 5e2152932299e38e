/** The plan package: its schema and types, digest, reading and checking a plan file, and the shard filter. */
export * from "./schema.js";
export { canonicalJson, planDigest, withDigest } from "./digest.js";
export { checkPlan, loadPlanFile, looksLikePlanFile, sameBaseUrl, type ChangeCheck, type LoadedPlan } from "./read.js";
export { inShard, MAX_SHARDS, parseShard, shardLabel, shardOfPlan, type Shard } from "./shard.js";

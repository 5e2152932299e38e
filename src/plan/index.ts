/** The plan package: its schema and types, digest, the plan file's one writer and one reader, and the shard filter. */
export * from "./schema.js";
export { canonicalJson, planDigest, withDigest } from "./digest.js";
export { loadPlanFile, looksLikePlanFile, type ChangeCheck, type LoadedPlan } from "./read.js";
export { inShard, MAX_SHARDS, parseShard, shardLabel, shardOfPlan, type Shard } from "./shard.js";
export { planFileChunks, planFileText, writePlanFile } from "./write.js";

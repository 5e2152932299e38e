/**
 * The state room (src/state/README.md): what one run learned, kept in a dir for the next one (`--state DIR`), used by
 * the engine only through an ApiClient that answers the same as the service would (client.ts).
 *
 *   const run = await openRunState({ dir, resyncAfterMs, fullRefresh }, { baseUrl, now, rules, version, warn });
 *   const client = run.wrap(apiClient);       // hand it to runPlan
 *   ...; await run.commit();                   // only after a successful run
 *   await run.release();                       // always (finally)
 */
import { createHash } from "node:crypto";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";
import { canonicalJson } from "../plan/digest.js";
import type { Plan } from "../plan/types.js";
import { openStateDir } from "./dir.js";
import { stateKey } from "./mac.js";
import { StateClient, type StateChoice, type StateCounts } from "./client.js";
import { STATE_FORMAT, STATE_FORMAT_VERSION } from "./schema.js";

export { StateClient, structureDigest, type StateChoice, type StateCounts } from "./client.js";
export { STATE_FILE, LOCK_FILE, STATE_FORMAT_VERSION } from "./schema.js";
export { openStateDir } from "./dir.js";
export { StateNotWritten } from "./writer.js";

/** Plan errors that come from the data, not from reading it: a run with only these still read everything it needed. */
const DATA_ERRORS = new Set(["conflict", "evaluation", "limit"]);

/** Whether a plan's run read all it needed, so its state may be written. */
export function readInFull(plan: Pick<Plan, "errors">): boolean {
  return plan.errors.every((e) => DATA_ERRORS.has(e.code));
}

export const DEFAULT_RESYNC_AFTER_MS = 24 * 3_600_000;
/** Changes are listed from the last run less this: clocks of client and service may differ, commits land late. */
export const DEFAULT_LOOKBACK_MS = 120_000;

export interface StateSettings {
  dir: string;
  /** a workflow last read in full longer ago than this is read in full again (default 24 h) */
  resyncAfterMs: number;
  /** read everything again and rewrite the state */
  fullRefresh: boolean;
  lookbackMs?: number;
}

export interface RunState {
  dir: string;
  wrap(inner: ApiClient): ApiClient;
  /** instances from the state and read again, once wrapped */
  counts(): StateCounts | undefined;
  /** with an `explain` callback: per workflow, the record reads and field values the state answered */
  explainAnswers(): void;
  /** writes the new state atomically; call only after a successful run */
  commit(): Promise<void>;
  release(): Promise<void>;
}

/** A rule's definition, without source positions or compiled forms: equal digests, equal meaning. */
export function ruleDigest(rule: CompiledRule): string {
  const skip = new Set(["pos", "expr", "fast", "needs", "description"]);
  const plain = JSON.parse(JSON.stringify(rule, (k, v: unknown) => (skip.has(k) || typeof v === "function" ? undefined : v))) as unknown;
  return createHash("sha256").update(canonicalJson(plain)).digest("hex").slice(0, 32);
}

export async function openRunState(
  settings: StateSettings,
  ctx: { baseUrl: string; apiKey?: string; now: Date; rules: readonly CompiledRule[]; version: string; warn(message: string): void; explain?(c: StateChoice): void },
): Promise<RunState> {
  // the state file's MAC key and key id, derived from the API key (mac.ts); the key itself is never written
  const key = stateKey(ctx.apiKey);
  const opened = await openStateDir(settings.dir, ctx.baseUrl, key, ctx.warn);
  opened.warnings.forEach((w) => ctx.warn(w));
  const digests: Record<string, string> = {};
  for (const r of ctx.rules) digests[r.name] = ruleDigest(r);
  const ids = new Set<number>();
  const names = new Set<string>();
  const previous = opened.previous;
  if (previous && !settings.fullRefresh) {
    const changed = ctx.rules.filter((r) => previous.header.rules[r.name] !== digests[r.name]);
    for (const r of changed) {
      if ("id" in r.workflow) ids.add(r.workflow.id);
      else names.add(r.workflow.name);
    }
    if (changed.length > 0) {
      const list = changed.map((r) => r.name);
      const shown = list.length > 5 ? `${list.slice(0, 5).join(", ")} and ${list.length - 5} more` : list.join(", ");
      ctx.warn(`state: rule${list.length === 1 ? "" : "s"} ${shown} new or changed since the last run: ${list.length === 1 ? "its workflow is" : "their workflows are"} read in full`);
    }
  }
  let client: StateClient | undefined;
  return {
    dir: opened.dir,
    wrap(inner) {
      const nowIso = ctx.now.toISOString();
      const writer = opened.startWriting({
        format: STATE_FORMAT,
        format_version: STATE_FORMAT_VERSION,
        flowrules_version: ctx.version,
        base_url: ctx.baseUrl,
        key_digest: key.id,
        written_at: new Date().toISOString(),
        run_at: nowIso,
        rules: digests,
      });
      client = new StateClient(inner, {
        now: ctx.now,
        previous,
        writer,
        fullRefresh: settings.fullRefresh,
        resyncAfterMs: settings.resyncAfterMs,
        lookbackMs: settings.lookbackMs ?? DEFAULT_LOOKBACK_MS,
        coldWorkflows: { ids, names },
        warn: ctx.warn,
        ...(ctx.explain ? { explain: ctx.explain } : {}),
      });
      return client;
    },
    counts: () => client?.counts(),
    explainAnswers: () => client?.explainAnswers(),
    async commit() {
      if (client) await client.commit();
    },
    release: () => opened.release(),
  };
}

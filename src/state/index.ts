/**
 * The state room (src/state/README.md): what one run learned, kept in a dir for the next one (`--state DIR`), used by
 * the engine only through an ApiClient that answers the same as the service would (client.ts).
 *
 *   const run = await openRunState({ dir, resyncAfterMs, fullRefresh }, { baseUrl, now, rules, version, warn });
 *   const client = run.wrap(apiClient);       // hand it to runPlan
 *   const sending = run.applying(applyClient); // apply through it: our writes' answers are written through
 *   ...; await run.commit();                   // only after a successful run (after the apply, when there is one)
 *   await run.release();                       // always (finally)
 */
import { createHash } from "node:crypto";
import type { ApiClient } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";
import { canonicalJson } from "../plan/digest.js";
import type { Plan } from "../plan/types.js";
import { openStateDir } from "./dir.js";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { stateKey, type StateKey } from "./mac.js";
import { indexState, type StateIndex } from "./reader.js";
import { StateClient, WriteThroughClient, type OwnWrite, type StateChoice, type StateCounts } from "./client.js";
import type { ListedChanges } from "./run.js";
import type { OlderAnswers } from "./held.js";
import { STATE_FILE, STATE_FORMAT, STATE_FORMAT_VERSION, type Marks } from "./schema.js";
import type { CheckpointPolicy, SyncProgress } from "./sync.js";

export {
  StateClient,
  WriteThroughClient,
  structureDigest,
  type OwnWrite,
  type StateChoice,
  type StateCounts,
} from "./client.js";
export type { ListedChanges } from "./run.js";
export { STATE_FILE, LOCK_FILE, STATE_FORMAT_VERSION } from "./schema.js";
export { openStateDir } from "./dir.js";
export { StateNotWritten } from "./writer.js";
export { syncLine, syncLeftMs, type SyncProgress, type CheckpointPolicy } from "./sync.js";
export {
  HeldClient,
  HeldMemo,
  NotHeld,
  listingKey,
  type HeldAnswers,
  recordOf,
  type HeldSources,
  type OlderAnswers,
  type Served,
} from "./held.js";
export { lacking } from "./held-lacking.js";
export type { StateIndex } from "./reader.js";

/** Plan errors that come from the data, not from reading it: a run with only these still read everything it needed. */
const DATA_ERRORS = new Set(["conflict", "evaluation", "limit"]);

/** Whether a plan's run read all it needed, so its state may be written. */
export function readInFull(plan: Pick<Plan, "errors">): boolean {
  return plan.errors.every((e) => DATA_ERRORS.has(e.code));
}

export const DEFAULT_RESYNC_AFTER_MS = 24 * 3_600_000;
/**
 * Changes are listed from when the last run looked, by the service's own clock, less this: a change stamped a moment
 * before the look may commit after it, and a service's machines keep their clocks close but not equal.
 */
export const DEFAULT_MARGIN_MS = 10_000;
/**
 * Without the service's clock (its answers carried no Date header): from the last run's start by our clock, less
 * this, since the two clocks may differ too.
 */
export const DEFAULT_LOOKBACK_MS = 120_000;

export interface StateSettings {
  dir: string;
  /** a workflow last read in full longer ago than this is read in full again (default 24 h) */
  resyncAfterMs: number;
  /** read everything again and rewrite the state */
  fullRefresh: boolean;
  marginMs?: number;
  lookbackMs?: number;
  /** when checkpoints are written during a sync (default every 250 records or 60 s) */
  checkpoints?: CheckpointPolicy;
}

export interface RunState {
  dir: string;
  /** the client to plan through: answers from the state where they still hold */
  wrap(inner: ApiClient): ApiClient;
  /**
   * The client to apply through: every call goes to the service; the answers of our own writes are written through
   * into the next state. Without a wrap() before (`apply plan.json --state`), commit carries the previous state forward.
   */
  applying(inner: ApiClient): ApiClient;
  /** our own writes so far (for the watcher's polls) */
  written(): readonly OwnWrite[];
  /** instances from the state and read again, once wrapped */
  counts(): StateCounts | undefined;
  /** with an `explain` callback: per workflow, the record reads and field values the state answered */
  explainAnswers(): void;
  /** writes the new state atomically; call only after a successful run */
  commit(): Promise<void>;
  /**
   * After a commit: per workflow, from when the next run lists changes (by the service's clock), for a watcher's poll
   * to ask that very listing (./known.ts); empty before a commit or when it failed.
   */
  changesFrom(): ReadonlyMap<number, string>;
  /**
   * A run stopped before it read all it needed (a signal, --max-duration): a checkpoint of what it read, when a
   * workflow was being read in full; how far that sync got (undefined: none going on, nothing written).
   */
  checkpoint(): Promise<SyncProgress | undefined>;
  /** the previous state's partial sync, when it holds one: how far it got */
  partial: SyncProgress | undefined;
  /**
   * The state file as this run's checkpoints left it, opened and verified again for a partial plan's answers
   * (held.ts); undefined when this run wrote no checkpoint (the file is still the previous state) or it does not
   * verify. The caller closes it.
   */
  reopen(): Promise<StateIndex | undefined>;
  /**
   * The previous complete state this run was using, with what its changes listings showed changed (held.ts): its
   * answers about the other instances hold at this run's `now`. Undefined without one (a first sync, --full-refresh).
   */
  older(): OlderAnswers | undefined;
  /** whether this run used the workflow (else what the file holds of it was carried from an earlier run's look) */
  used(processId: number): boolean;
  release(): Promise<void>;
}

/**
 * A rule's definition, without source positions or compiled forms: equal digests, equal meaning. The header keeps
 * them for reference only: the state is keyed by what was asked of the service, so a rule edit invalidates nothing
 * (docs/operating.md, "State between runs").
 */
export function ruleDigest(rule: CompiledRule): string {
  const skip = new Set(["pos", "expr", "fast", "needs", "description"]);
  const plain = JSON.parse(
    JSON.stringify(rule, (k, v: unknown) => (skip.has(k) || typeof v === "function" ? undefined : v)),
  ) as unknown;
  return createHash("sha256").update(canonicalJson(plain)).digest("hex").slice(0, 32);
}

export async function openRunState(
  settings: StateSettings,
  ctx: {
    baseUrl: string;
    apiKey?: string;
    now: Date;
    rules: readonly CompiledRule[];
    version: string;
    warn(message: string): void;
    explain?(c: StateChoice): void;
    /** after each checkpoint of a sync: how far it got */
    onCheckpoint?(p: SyncProgress): void;
    /** changes listings a watcher's poll asked just before this run (./known.ts) */
    listed?: ListedChanges;
  },
): Promise<RunState> {
  // the state file's MAC key and key id, derived from the API key (mac.ts); the key itself is never written
  const key = stateKey(ctx.apiKey);
  const opened = await openStateDir(settings.dir, ctx.baseUrl, key, ctx.warn);
  opened.warnings.forEach((w) => ctx.warn(w));
  const digests: Record<string, string> = {};
  for (const r of ctx.rules) digests[r.name] = ruleDigest(r);
  const previous = opened.previous;
  let client: StateClient | undefined;
  const stateClient = (inner: ApiClient): StateClient => {
    const writer = opened.startWriting({
      format: STATE_FORMAT,
      format_version: STATE_FORMAT_VERSION,
      flowrules_version: ctx.version,
      base_url: ctx.baseUrl,
      key_digest: key.id,
      written_at: new Date().toISOString(),
      run_at: ctx.now.toISOString(),
      rules: digests,
    });
    return new StateClient(inner, {
      now: ctx.now,
      previous,
      writer,
      fullRefresh: settings.fullRefresh,
      resyncAfterMs: settings.resyncAfterMs,
      marginMs: settings.marginMs ?? DEFAULT_MARGIN_MS,
      lookbackMs: settings.lookbackMs ?? DEFAULT_LOOKBACK_MS,
      warn: ctx.warn,
      ...(ctx.explain ? { explain: ctx.explain } : {}),
      ...(settings.checkpoints ? { checkpoints: settings.checkpoints } : {}),
      ...(ctx.onCheckpoint ? { onCheckpoint: ctx.onCheckpoint } : {}),
      ...(ctx.listed ? { listed: ctx.listed } : {}),
    });
  };
  let committed: Marks | undefined;
  return {
    dir: opened.dir,
    wrap(inner) {
      client = stateClient(inner);
      return client;
    },
    applying(inner) {
      client ??= stateClient(inner);
      return new WriteThroughClient(inner, client);
    },
    written: () => client?.written() ?? [],
    counts: () => client?.counts(),
    explainAnswers: () => client?.explainAnswers(),
    async commit() {
      if (!client) return;
      await client.commit();
      committed = client.marks();
    },
    changesFrom() {
      // as the next run's since() takes it from the bookmarks just written (./known.ts)
      const margin = settings.marginMs ?? DEFAULT_MARGIN_MS;
      const out = new Map<number, string>();
      for (const [pid, m] of Object.entries(committed ?? {}))
        if (m.looked_at && !m.partial) out.set(Number(pid), new Date(Date.parse(m.looked_at) - margin).toISOString());
      return out;
    },
    checkpoint: async () => (client ? client.checkpoint() : undefined),
    partial: previous && !settings.fullRefresh ? partialOf(previous.marks) : undefined,
    reopen: async () =>
      client?.out.placed === true ? reopenState(opened.dir, settings.dir, ctx.baseUrl, key) : undefined,
    older: () => (client ? olderAnswers(client) : undefined),
    used: (pid) => client?.workflows.has(pid) === true,
    release: () => opened.release(),
  };
}

/** What the run's client can say of its previous state: only workflows it reasons about from it (./client.ts). */
function olderAnswers(client: StateClient): OlderAnswers | undefined {
  const prev = client.prev;
  if (!prev || client.wentBack !== undefined) return undefined;
  return {
    index: prev,
    changed(pid) {
      const w = client.workflows.get(pid);
      // read afresh (no previous state, past --resync-after, a structure change) or the service went back
      if (!w || w.cold || client.wentBack !== undefined) return undefined;
      return w.changedSet;
    },
  };
}

/** The state file as a run left it, used only when whole up to a checkpoint or its end and verified with the key. */
async function reopenState(
  dir: string,
  dirArg: string,
  baseUrl: string,
  key: StateKey,
): Promise<StateIndex | undefined> {
  let fh;
  try {
    fh = await open(join(dir, STATE_FILE), "r");
  } catch {
    return undefined;
  }
  try {
    const index = await indexState(fh, { dirArg, baseUrl, key });
    if (index.header.key_digest === key.id && index.authentic === true) return index;
  } catch {
    // not usable: no partial plan is made from it
  }
  await fh.close();
  return undefined;
}

/** What a state's partial sync holds: the workflows marked partial, their instances read and counted. */
function partialOf(marks: Marks): SyncProgress | undefined {
  let workflows = 0;
  let synced = 0;
  let total: number | null = null;
  for (const m of Object.values(marks)) {
    if (!m.partial) continue;
    workflows++;
    synced += m.synced ?? 0;
    if (m.total !== undefined && m.total !== null) total = (total ?? 0) + Math.max(m.total, m.synced ?? 0);
  }
  return workflows > 0 ? { workflows, synced, total, requests: 0, readThisRun: 0 } : undefined;
}

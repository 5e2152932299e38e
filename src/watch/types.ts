/**
 * What a watcher is given (src/commands/watch.ts wires it): its settings as one object, and the parts that live in
 * the rooms above it — loading the rules and the config, planning as `plan` does, notifying — as functions, so the
 * loop runs the verbs' own code without importing upwards.
 */
import type { ApiClient, ClientOptions, ClientSettings, RequestLimiter } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import type { CommandIO } from "../log/command-io.js";
import type { Plan } from "../plan/types.js";
import type { NotifyPayload } from "../render/notify/payload.js";
import type { RuleSet } from "../rules/types.js";
import { pauseUnless } from "../model/abortable.js";
import type { ListedChanges } from "../state/index.js";

/** One planning run of a cycle. */
export interface CyclePlanRun {
  /** the watcher's connection: with its metrics' event sink and its stop signal */
  connection: ClientSettings;
  /** the cycle's io: the log, no stdout and stderr lines (the cycle says what it did in its own lines) */
  io: CommandIO;
  limiter: RequestLimiter;
  /** the watcher's first cycle (--full-refresh holds for it only) */
  first: boolean;
  /** the plan will be applied: it records what it saw of each instance it changes */
  recordSeen: boolean;
  /** state-cache: with a state dir, the state handed over open after planning, for the apply to send through */
  keep?: (held: HeldCycleState) => void;
  /** after each checkpoint of a first sync: how far it got (the metrics' gauges) */
  onSync?: (p: { synced: number; total: number | null; leftS: number | null }) => void;
  /** state-cache: the changes listings the poll before this cycle asked, for the state to take as its own (./poll.ts) */
  listed?: ListedChanges;
}

/**
 * state-cache: the cycle's state, open from its plan to the end of its apply (src/commands/state.ts, HeldState): the
 * apply sends through it so that the answers of our writes are written through; written once, after the apply.
 */
export interface HeldCycleState {
  applying(client: ApiClient): ApiClient;
  /** our writes so far: instance, its workflow when the answer names it, its last_updated_time after our write */
  written(): ReadonlyArray<{ id: number; process_id?: number; last_updated_time?: string }>;
  finish(): Promise<void>;
  release(): Promise<void>;
  /** after finish(): per workflow, from when the next cycle's state lists changes (the next poll asks that listing) */
  changesFrom(): ReadonlyMap<number, string>;
}

/** The rules and the settings a watcher runs with, as loaded at its start and by each reload that validates. */
export interface Loaded {
  ruleSet: RuleSet;
  /** plans the rule set with the planning settings it was loaded with (as `plan` does) */
  plan(run: CyclePlanRun): Promise<Plan>;
  /** tells the webhooks (--notify) of a cycle that changed something or failed; never throws */
  notify(payload: NotifyPayload): Promise<void>;
  /** the connection it was loaded with; a reload cannot change the watcher's (its state dir is one service's) */
  connection: ConnectionSettings;
  /** the settings that change what is planned, as a string: a reload that changes it runs a cycle at once */
  planningKey: string;
  profileName?: string;
}

export interface WatcherSettings {
  /** the rule paths and the config file, as given: a change of what they hold reloads (./fingerprint.ts) */
  watched: string[];
  /** the state dir as the user named it (for messages) and resolved */
  stateDir: string;
  stateDirShown: string;
  /** what the lock file says the holder is doing ("watch rules/") */
  doing: string;
  apply: boolean;
  /** --interval; derived from the budget when absent */
  intervalMs?: number;
  budgetPercent: number;
  minIntervalMs: number;
  /** rules whose meaning moves with time get a cycle at least this often */
  timeCycleMs: number;
  /** the cap of the back-off after failed cycles (default MAX_BACKOFF_MS; tests lower it through ENV.watchMaxBackoffMs, src/model/env-names.ts) */
  maxBackoffMs?: number;
  /** stop after this many cycles (tests); default: until stopped */
  maxCycles?: number;
  metrics?: { port: number; host: string; onListening?: (port: number) => void };
  cwd: string;
  /** knobs for tests and benchmarks */
  tuning?: { verifyDelayMs?: number; client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">> };
}

/** The parts a watcher runs with: its io, its stop, and the loader of rules and config. */
export interface WatcherParts {
  io: CommandIO;
  /** aborted by SIGTERM/SIGINT (src/cli/signals.ts): the watcher stops as on a clean stop */
  signal: AbortSignal;
  /** SIGHUP: asks for a reload between cycles */
  reloads: ReloadRequests;
  /**
   * Reads the config file and the rules again: what the watcher runs with, or undefined when they do not validate
   * (each problem said in one line by it). May throw a UserError (a config file that does not parse).
   */
  load(): Promise<Loaded | undefined>;
}

/** Reload requests (SIGHUP), taken by the loop between cycles; a request wakes a loop that waits for its interval. */
export class ReloadRequests {
  private why: string | undefined;
  private wake: (() => void) | undefined;

  request(why: string): void {
    this.why = why;
    this.wake?.();
  }

  /** Whether a request waits to be taken. */
  pending(): boolean {
    return this.why !== undefined;
  }

  /** The pending request's reason, once. */
  take(): string | undefined {
    const why = this.why;
    this.why = undefined;
    return why;
  }

  /** Resolves after `ms`, or at once on a stop or a reload request. */
  pause(ms: number, stop: AbortSignal): Promise<void> {
    if (this.why !== undefined) return Promise.resolve();
    return pauseUnless(ms, stop, (wake) => (this.wake = wake)).finally(() => (this.wake = undefined));
  }

  /** Resolves after `ms` or at once on a stop; requests meanwhile stay pending (a burst of them is taken as one). */
  gather(ms: number, stop: AbortSignal): Promise<void> {
    return pauseUnless(ms, stop);
  }
}

/**
 * What `flowrules apply` is given (./apply.ts runs it, ./apply-loaded.ts shows what happened): the options whole, and
 * the question asked at a terminal.
 */
import type { ClientOptions } from "../api/index.js";
import type { ApplyingSettings, ConnectionSettings } from "../model/settings.js";
import type { PlanRunOptions } from "./planning.js";
import type { ApplyFormat } from "../render/apply/index.js";
import type { Shard } from "../plan/shard.js";
import type { NotifySettings } from "./notify.js";
import type { HeldState } from "./state.js";

/** Asks the person at the terminal (stdin). */
export interface Confirm {
  /** stdin is a terminal */
  isTTY: boolean;
  ask(question: string): Promise<string>;
}

/**
 * `apply`'s options. With rule paths it plans with the same PlanRunOptions as `plan` (built from the same resolved
 * settings in src/cli), handed over whole, so every planning flag works alike on both verbs. How it applies is the
 * applying settings (src/model/settings.ts, documented there), each optional here: the library's callers get the
 * defaults.
 */
export interface ApplyCommandOptions
  extends PlanRunOptions, Partial<Omit<ApplyingSettings, "autoApprove">>, Pick<ApplyingSettings, "autoApprove"> {
  paths: string[];
  detailedExitcode: boolean;
  quiet: boolean;
  /** the result on stdout: text (default) or json (schemas/apply-result.schema.json) */
  format?: ApplyFormat;
  /** only these rules (rule paths only) */
  rules: string[];
  /** only the changes (saved plan) or selected instances (rule paths) with id % count === index (src/plan/shard.ts) */
  shard?: Shard;
  connection: ConnectionSettings;
  /** where .flowrules/ lives and relative paths resolve; default process.cwd() */
  cwd?: string;
  confirm?: Confirm;
  /** aborted on SIGINT/SIGTERM: no new request starts, the ones in flight finish and are journalled */
  signal?: AbortSignal;
  /** webhooks told at the end (--notify, its variable or the profile) */
  notify?: NotifySettings;
  /** with --state: the state the changes are sent through, written through (src/commands/state.ts) */
  writeThrough?: HeldState;
  /**
   * Timing no flag sets: the defaults suit the service (a read 1 s after an unknown outcome, 3 sends at most, a
   * heartbeat every 10 s); the library's callers may shorten them.
   */
  tuning?: {
    verifyDelayMs?: number;
    maxSendAttempts?: number;
    heartbeatMs?: number;
    /** how often a waiting run looks at the lock again (default 2 s) */
    lockPollMs?: number;
    client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">>;
  };
}

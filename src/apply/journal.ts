/**
 * The apply journal: append-only JSON lines, one per event, written (and fdatasync'ed) as it happens, so that a run
 * killed at any point leaves a record the next run of the same plan can trust:
 *
 *   {"event":"start","plan":"sha256:…","at":"…","pid":123,"host":"…","flowrules_version":"…"}
 *   {"event":"intent","change":"rule:complete_step:100001:20111","attempt":1,"at":"…"}       ← before the request
 *   {"event":"done","change":"…","how":"response","last_updated_time":"…","at":"…"}
 *   {"event":"stale"|"failed"|"not_acted","change":"…","reason":"…","at":"…"}   (failed: outcome_unknown?)
 *   {"event":"check","since":"…","started_at":"…","workflows":2,"listed":5,"read":1,"stale":1,"at":"…"}   ← staleness
 *   {"event":"finish","at":"…","applied":3,"stale":1,"failed":0,"not_acted":0,"deferred":0}
 *
 * An `intent` without a later outcome means "the request may have been sent": the next run decides it by reading
 * the instance, never by sending blindly. Lines belong to the plan named by the `start` line before them, so one file
 * may hold the runs of several plans (a `--journal` shared by scheduled runs) without mixing them up. Journals written
 * before batches were named generically (`not_aborted`, README.md "Compatibility notes") read as `not_acted`.
 */
import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
  fstatSync,
  readSync,
  statSync,
  type Stats,
} from "node:fs";
import { kindOf } from "../fs/capped-read.js";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { z } from "zod";
import { UserError } from "../model/errors.js";
import { writeFailure } from "../fs/write-file.js";
import { errorMessage, isRecord } from "../model/guards.js";

const at = z.string();
const EventSchema = z.discriminatedUnion("event", [
  z.object({
    event: z.literal("start"),
    plan: z.string(),
    at,
    pid: z.number().int(),
    host: z.string(),
    flowrules_version: z.string().optional(),
    plan_file: z.string().optional(),
  }),
  z.object({
    event: z.literal("intent"),
    change: z.string(),
    attempt: z.number().int(),
    batch: z.number().int().optional(),
    at,
  }),
  z.object({
    event: z.literal("done"),
    change: z.string(),
    /** response: the service answered 2xx; returned: the batch's answer listed the id; verified: decided by reading */
    how: z.enum(["response", "returned", "verified"]),
    /** the instance's last_updated_time right after our change, when known: the baseline for its other changes */
    last_updated_time: z.string().optional(),
    at,
  }),
  z.object({ event: z.literal("stale"), change: z.string(), reason: z.string(), at }),
  z.object({
    event: z.literal("failed"),
    change: z.string(),
    reason: z.string(),
    /** true when the request may still have taken effect (it could not be decided by reading) */
    outcome_unknown: z.boolean().optional(),
    at,
  }),
  /** a batch did not return the change's instance id; the reason is what reading it showed */
  z.object({ event: z.literal("not_acted"), change: z.string(), reason: z.string(), at }),
  /** a staleness check: instances of `workflows` workflows updated since `since` were listed, and judged */
  z.object({
    event: z.literal("check"),
    since: z.string(),
    started_at: z.string(),
    workflows: z.number().int(),
    listed: z.number().int(),
    read: z.number().int(),
    stale: z.number().int(),
    at,
  }),
  z.object({
    event: z.literal("finish"),
    at,
    applied: z.number().int(),
    stale: z.number().int(),
    failed: z.number().int(),
    not_acted: z.number().int(),
    /** not started before --max-duration ran out: the next run of this plan resumes them */
    deferred: z.number().int().optional(),
  }),
]);
export type JournalEvent = z.infer<typeof EventSchema>;
type Without<E, K extends string> = E extends unknown ? Omit<E, K> : never;
/** An event as callers give it: the journal stamps `at`. */
export type NewEvent = Without<JournalEvent, "at">;
export type DoneEvent = Extract<JournalEvent, { event: "done" }>;

/** What earlier runs of this plan left behind, per change. */
export interface ChangeHistory {
  /** the change took effect (terminal) */
  done?: DoneEvent;
  /** a batch did not act on the instance (terminal: reading it showed why, e.g. it is not running) */
  notActed?: string;
  /** an intent was written after the last outcome: the request may have been sent */
  unresolvedIntent: boolean;
  /** intents over all runs */
  intents: number;
  /** when the latest intent was written */
  lastIntentAt?: string;
}

export class Journal {
  private readonly history = new Map<string, ChangeHistory>();
  /** instance id → its last_updated_time after our latest change to it */
  private readonly baselines = new Map<number, string>();
  private fd: number | undefined;
  /** lines that did not parse (a torn last line after a crash), reported once */
  readonly skippedLines: number;
  /** runs of this plan recorded before this one */
  readonly earlierRuns: number;
  /** runs of other plans in the same file (a --journal shared by scheduled runs) */
  readonly otherPlanRuns: number;

  private constructor(
    readonly file: string,
    readonly planDigest: string,
    events: JournalEvent[],
    skipped: number,
    otherPlans: number,
    private readonly instanceOf: (changeId: string) => number | undefined,
    private readonly now: () => number,
  ) {
    this.skippedLines = skipped;
    this.otherPlanRuns = otherPlans;
    this.earlierRuns = events.filter((e) => e.event === "start").length;
    for (const e of events) this.remember(e);
  }

  /**
   * Opens (creating it and its folder when absent) the journal of a plan, replays it, and refuses a journal that
   * belongs to another plan. `instanceOf` maps a change id to its instance (for the per-instance baselines); `now`
   * stamps the lines (the apply's clock).
   */
  static open(
    file: string,
    planDigest: string,
    instanceOf: (changeId: string) => number | undefined,
    now: () => number = Date.now,
  ): Journal {
    const { events, skipped, otherPlans } = readEvents(file, planDigest);
    const journal = new Journal(file, planDigest, events, skipped, otherPlans, instanceOf, now);
    mkdirSync(dirname(file), { recursive: true });
    journal.fd = openSync(file, "a", 0o644);
    journal.terminateTornLine();
    return journal;
  }

  historyOf(changeId: string): ChangeHistory {
    return this.history.get(changeId) ?? { unresolvedIntent: false, intents: 0 };
  }

  /** The instance's last_updated_time after our latest change to it (this run or an earlier one), if known. */
  baselineOf(instanceId: number): string | undefined {
    return this.baselines.get(instanceId);
  }

  /** Appends one event, durably, before returning. */
  append(event: NewEvent): void {
    this.appendAll([event]);
  }

  /** Appends several events in one write and one sync (a batch's intents). */
  appendAll(events: NewEvent[]): void {
    if (events.length === 0) return;
    if (this.fd === undefined) throw new Error(`the journal ${this.file} is closed`);
    const stamp = new Date(this.now()).toISOString();
    const full = events.map((e) => ({ ...e, at: stamp }) as JournalEvent);
    const text = full.map((e) => `${JSON.stringify(e)}\n`).join("");
    const buf = Buffer.from(text, "utf8");
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
      // survives a power cut too, not only kill -9 (which the page cache would survive anyway)
      fdatasyncSync(this.fd);
    } catch (err) {
      // nothing is sent whose intent is not journalled: the run stops here, naming the file
      throw new UserError(`cannot write the journal ${this.file}: ${writeFailure(err)}`);
    }
    for (const e of full) this.remember(e);
  }

  /** Records the start of a run. */
  start(extra: { flowrules_version: string; plan_file?: string }): void {
    this.append({ event: "start", plan: this.planDigest, pid: process.pid, host: hostname(), ...extra });
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private remember(e: JournalEvent): void {
    if (e.event === "start" || e.event === "finish" || e.event === "check") return;
    const h = this.history.get(e.change) ?? { unresolvedIntent: false, intents: 0 };
    switch (e.event) {
      case "intent":
        h.intents += 1;
        h.unresolvedIntent = true;
        h.lastIntentAt = e.at;
        break;
      case "done": {
        h.done = e;
        h.unresolvedIntent = false;
        const id = this.instanceOf(e.change);
        if (id !== undefined && e.last_updated_time) this.baselines.set(id, e.last_updated_time);
        break;
      }
      case "not_acted":
        h.notActed = e.reason;
        h.unresolvedIntent = false;
        break;
      case "stale":
        h.unresolvedIntent = false;
        break;
      case "failed":
        // decided without effect, unless the failure itself left the outcome open
        h.unresolvedIntent = e.outcome_unknown === true;
        break;
    }
    this.history.set(e.change, h);
  }

  /** After a crash mid-write the file may end without a newline: start our lines on a fresh one. */
  private terminateTornLine(): void {
    if (this.fd === undefined) return;
    const size = fstatSync(this.fd).size;
    if (size === 0) return;
    const fd = openSync(this.file, "r");
    try {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) writeSync(this.fd, "\n");
    } finally {
      closeSync(fd);
    }
  }
}

/** A line in the words of journals written before batches were named generically: `not_aborted` became `not_acted`. */
function today(data: unknown): unknown {
  if (!isRecord(data)) return data;
  if (data.event === "not_aborted") return { ...data, event: "not_acted" };
  if (data.event === "finish" && "not_aborted" in data && !("not_acted" in data)) {
    const { not_aborted: notActed, ...rest } = data;
    return { ...rest, not_acted: notActed };
  }
  return data;
}

/**
 * Why a journal path cannot be a journal, or undefined when it can: a regular file, or nothing yet. Judged with stat
 * before anything opens it: reading a FIFO blocks the whole process (signals included), a device never ends.
 */
export function journalPathProblem(file: string): string | undefined {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    return `cannot read the journal ${file}: ${code ?? errorMessage(err)}`;
  }
  if (!st.isFile())
    return `the journal ${file} is ${kindOf(st)}, not a regular file: name a file flowrules may create (or its own journal)`;
  return undefined;
}

/**
 * The events of one plan: a journal file may hold runs of several plans (one --journal for every scheduled run);
 * each line belongs to the run whose `start` line precedes it, and only this plan's runs count.
 */
function readEvents(file: string, planDigest: string): { events: JournalEvent[]; skipped: number; otherPlans: number } {
  const problem = journalPathProblem(file);
  if (problem !== undefined) throw new UserError(problem);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if (typeof err === "object" && err !== null && "code" in err && (err as { code: unknown }).code === "ENOENT") {
      return { events: [], skipped: 0, otherPlans: 0 };
    }
    throw new UserError(`cannot read the journal ${file}: ${errorMessage(err)}`);
  }
  const events: JournalEvent[] = [];
  let skipped = 0;
  let otherPlans = 0;
  let ours = false;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      skipped += 1; // a line torn by a crash
      continue;
    }
    const parsed = EventSchema.safeParse(today(data));
    if (!parsed.success) {
      skipped += 1;
      continue;
    }
    const e = parsed.data;
    if (e.event === "start") {
      ours = e.plan === planDigest;
      if (!ours) otherPlans += 1;
    }
    if (ours) events.push(e);
  }
  return { events, skipped, otherPlans };
}

/**
 * Every readable event of a journal file, in order (torn or unknown lines left out); none when it does not exist.
 * For readers that are not a run of the plan: the watcher's cycles and `flowrules history`.
 */
export function journalEvents(file: string): JournalEvent[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: JournalEvent[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const e = EventSchema.safeParse(JSON.parse(line));
      if (e.success) out.push(e.data);
    } catch {
      // a line torn by a crash
    }
  }
  return out;
}

/**
 * Whether the latest run recorded in these events finished: a `finish` line after its `start`. False with no run
 * at all. A run killed (`kill -9`, a power cut) while applying has none: its plan is to be resumed.
 */
export function lastRunFinished(events: readonly JournalEvent[]): boolean {
  let started = false;
  let finished = false;
  for (const e of events) {
    if (e.event === "start") {
      started = true;
      finished = false;
    } else if (e.event === "finish") finished = true;
  }
  return started && finished;
}

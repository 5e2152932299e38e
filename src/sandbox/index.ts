/**
 * flowrules sandbox: a faithful, self-contained, in-memory Workflow Instance Service (docs/sandbox.md).
 *
 *   const sb = await startSandbox({ port: 0, instances: 500, seed: 1 });
 *   await fetch(`${sb.baseUrl}/processes/`, { headers: { Authorization: "Api-Key sandbox-admin" } });
 *   sb.store.update(100001, (i) => { i.tags.push("edited"); });   // an outside edit
 *   sb.simulate({ seed: 2, churn: 0.01 });                         // people's work: 1 % of the instances changed
 *   sb.advanceClock("PT10M");                                      // ten minutes later (deadlines come due)
 *   sb.requests();                                                 // what the client sent, in order
 *   await sb.close();
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { CursorCodec } from "./cursor.js";
import { Faults, checkFaults, type FaultSettings } from "./faults.js";
import { RequestLog, type RequestLogEntry } from "./request-log.js";
import { Quirks } from "./quirks.js";
import { createSandboxServer } from "./server.js";
import { SandboxStore } from "./store.js";
import { simulatePeople, type PeopleOptions, type PeopleResult } from "./people.js";
import { clockStep } from "./control.js";
import { mixSeed } from "./prng.js";

export type { RequestLogEntry } from "./request-log.js";
export { SandboxStore, type StepAction } from "./store.js";
export type { InstanceState, InstanceStatus, Priority, VisibilityMode } from "./state.js";
export type { InstanceRecord, ListElement, ProcessSnapshot, WorkflowRecord } from "./serialize.js";
export { USERS, WORKFLOWS, TAG_POOL } from "./catalog.js";
export { describeUser } from "./access.js";
export { FIRST_INSTANCE_ID } from "./generate.js";
export { QUIRK_NAMES, parseQuirks, quirkList } from "./quirks.js";
export { PEOPLE_ACTIONS, type PeopleAction, type PeopleOptions, type PeopleResult } from "./people.js";

export interface SandboxOptions {
  /** default 0 (a free port) here; the CLI defaults to 4010 */
  port?: number;
  /** default 200 */
  instances?: number;
  /** default 1 */
  seed?: number;
  latencyMs?: number;
  failRate?: number;
  /** 0 = off */
  rateLimitPerMin?: number;
  /** the rate limit's sliding window, default 60_000 ms */
  rateLimitWindowMs?: number;
  resetRate?: number;
  /** pin the clock for deterministic tests; default: real time, data generated relative to the start */
  now?: Date;
  /** simulated people make this many changes a minute in the background (people.ts; the demo); default 0 = none */
  peoplePerMin?: number;
  /** answer as a real service does (see quirks.ts and README.md "Real services"); default none: faithful answers */
  quirks?: readonly string[];
}

export interface RunningSandbox {
  /** "http://127.0.0.1:PORT/api" (no trailing slash) */
  baseUrl: string;
  /** "http://127.0.0.1:PORT" */
  origin: string;
  port: number;
  /** same data as GET /__sandbox/requests */
  requests(): RequestLogEntry[];
  /** how many requests came since the last clear (not capped like the log, nothing copied) */
  requestCount(): number;
  clearRequests(): void;
  /** the quirks in effect (small-pages included when another one implies it) */
  quirks: string[];
  /** direct, in-process access to the data (see store.ts) */
  store: SandboxStore;
  /** people's work between runs (people.ts): values, tags, priorities edited, steps completed, aborts, starts, deadlines */
  simulate(opts?: PeopleOptions): PeopleResult;
  /** moves the sandbox clock forward: milliseconds or an ISO 8601 duration ("PT10M"); returns the new time */
  advanceClock(by: number | string): Date;
  /** change fault flags at run time */
  setFaults(
    f: Partial<Pick<SandboxOptions, "latencyMs" | "failRate" | "rateLimitPerMin" | "rateLimitWindowMs" | "resetRate">>,
  ): void;
  close(): Promise<void>;
}

export const DEFAULT_INSTANCES = 200;
export const DEFAULT_SEED = 1;
const PEOPLE_TICK_MS = 5_000;
/** Generous upper bound so a typo cannot exhaust memory. */
export const MAX_INSTANCES = 1_000_000;

export async function startSandbox(opts: SandboxOptions = {}): Promise<RunningSandbox> {
  const port = opts.port ?? 0;
  const instances = opts.instances ?? DEFAULT_INSTANCES;
  const seed = opts.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`port must be an integer 0–65535, got ${port}`);
  if (!Number.isInteger(instances) || instances < 0 || instances > MAX_INSTANCES) {
    throw new RangeError(`instances must be an integer 0–${MAX_INSTANCES}, got ${instances}`);
  }
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  if (opts.now && Number.isNaN(opts.now.getTime())) throw new RangeError("now must be a valid Date");
  const faultSettings: Partial<FaultSettings> = {
    latencyMs: opts.latencyMs,
    failRate: opts.failRate,
    rateLimitPerMin: opts.rateLimitPerMin,
    rateLimitWindowMs: opts.rateLimitWindowMs,
    resetRate: opts.resetRate,
  };
  checkFaults(faultSettings);
  const quirks = new Quirks(opts.quirks ?? []);

  const people = opts.peoplePerMin ?? 0;
  if (!Number.isFinite(people) || people < 0 || people > 1_000_000)
    throw new RangeError(`peoplePerMin must be 0–1000000, got ${people}`);
  const store = new SandboxStore({ seed, instances, now: opts.now });
  const log = new RequestLog();
  const faults = new Faults(seed, Object.fromEntries(Object.entries(faultSettings).filter(([, v]) => v !== undefined)));
  const server = createSandboxServer({ store, log, faults, cursors: new CursorCodec(seed), quirks });
  await listen(server, port);
  const actualPort = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${actualPort}`;
  store.setOrigin(origin);

  // people at work for the demo: a round every PEOPLE_TICK_MS, the fraction carried to the next round
  let peopleTimer: NodeJS.Timeout | undefined;
  if (people > 0) {
    let owed = 0;
    let round = 0;
    peopleTimer = setInterval(() => {
      owed += (people * PEOPLE_TICK_MS) / 60_000;
      const changes = Math.floor(owed);
      owed -= changes;
      if (changes > 0) simulatePeople(store, { seed: mixSeed(seed, ++round), changes });
    }, PEOPLE_TICK_MS);
    peopleTimer.unref();
  }

  let closing: Promise<void> | undefined;
  return {
    baseUrl: `${origin}/api`,
    origin,
    port: actualPort,
    requests: () => log.list(),
    requestCount: () => log.count,
    clearRequests: () => log.clear(),
    quirks: quirks.names,
    store,
    setFaults: (f) => faults.set(f),
    simulate: (o) => simulatePeople(store, o),
    advanceClock: (by) => store.advanceClock(clockStep(by)),
    close: () => {
      clearInterval(peopleTimer);
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once("error", onError);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
}

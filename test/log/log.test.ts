/** The logger module: JSON and text formats, redaction, stderr capture in json mode, run events with counts. */
import { describe, expect, it } from "vitest";
import {
  clientEventLogger,
  createLogger,
  jsonLogger,
  nullLogger,
  redactor,
  runLogged,
  textLogger,
  withLogger,
} from "../../src/log/index.js";
import { logOutcomes } from "../../src/render/events/apply.js";
import type { ChangeOutcome } from "../../src/apply/outcome.js";
import { memoryIO } from "../helpers/io.js";

const lines = (s: string): Array<Record<string, unknown>> =>
  s
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("json logger", () => {
  it("writes one object per line: ts, level, event, then the fields", () => {
    let out = "";
    const log = jsonLogger({ write: (s) => (out += s), now: () => new Date("2026-01-02T03:04:05.000Z") });
    log.event("rule.planned", { rule: "r", matched: 3 });
    log.event("plan.error", { message: "boom" }, "error");
    expect(out.endsWith("\n")).toBe(true);
    expect(out.split("\n")[0]).toBe(
      '{"ts":"2026-01-02T03:04:05.000Z","level":"info","event":"rule.planned","rule":"r","matched":3}',
    );
    expect(lines(out)[1]).toMatchObject({ level: "error", event: "plan.error", message: "boom" });
    expect(log.structured).toBe(true);
  });

  it("keeps the envelope when a field has its name, and survives errors, bigints and cycles", () => {
    let out = "";
    const log = jsonLogger({ write: (s) => (out += s) });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    log.event("x", { event: "spoofed", level: "debug", err: new Error("bad"), n: 10n });
    log.event("y", { cyclic });
    const [a, b] = lines(out);
    expect(a).toMatchObject({
      event: "x",
      level: "info",
      field_event: "spoofed",
      field_level: "debug",
      err: "bad",
      n: "10",
    });
    expect(b).toMatchObject({ event: "y", log_error: "fields not serialisable" });
  });
});

describe("redaction", () => {
  it("masks every occurrence of a secret, also JSON-escaped, and leaves short ones alone", () => {
    const scrub = redactor(['k3y"with\\quote', "abc", undefined, "", "s3cr3t-key-123"]);
    expect(scrub("a s3cr3t-key-123 b s3cr3t-key-123")).toBe("a [redacted] b [redacted]");
    expect(scrub(JSON.stringify({ v: 'k3y"with\\quote' }))).toBe('{"v":"[redacted]"}');
    expect(scrub("abc stays")).toBe("abc stays");
  });

  it("createLogger scrubs the API key from whatever reaches it, in both formats", () => {
    const key = "flowrules-unit-key-8f3a1c";
    for (const format of ["json", "text"] as const) {
      let out = "";
      const log = createLogger({ format, write: (s) => (out += s), secrets: [key] });
      log.event(
        "request.retried",
        { method: "GET", path: `/x?k=${key}`, attempt: 2, reason: `echo ${key}`, delay_ms: 10 },
        "warn",
      );
      expect(out).toContain("[redacted]");
      expect(out).not.toContain(key);
    }
  });
});

describe("text logger", () => {
  it("prints only what a person needs (retries, 429 pauses); other events stay silent", () => {
    let out = "";
    const log = textLogger({ write: (s) => (out += s) });
    log.event("run.started", { command: "plan" });
    log.event("rule.planned", { rule: "r" });
    log.event("request.rate_limited", { delay_ms: 900, source: "client" });
    expect(out).toBe("");
    clientEventLogger(log)({
      type: "retry",
      method: "GET",
      path: "/processes/",
      attempt: 2,
      reason: "503",
      delayMs: 500,
    });
    clientEventLogger(log)({ type: "rate-limited", delayMs: 2000, source: "server" });
    expect(out).toBe(
      "flowrules: retrying GET /processes/ (attempt 2: 503) in 0.5 s\nflowrules: the service answered 429: every request waits 2.0 s\n",
    );
    expect(log.structured).toBe(false);
  });

  it("prints the limiter's waits a person would take for a hang; the JSON log carries reason, budget and window", () => {
    let out = "";
    const log = textLogger({ write: (s) => (out += s) });
    const toText = clientEventLogger(log);
    toText({ type: "rate-limited", delayMs: 3_000, source: "client", reason: "window", budget: 95, windowMs: 60_000 });
    expect(out).toBe("");
    toText({ type: "rate-limited", delayMs: 41_500, source: "client", reason: "window", budget: 95, windowMs: 60_000 });
    toText({ type: "rate-limited", delayMs: 2_000, source: "client", reason: "quota", windowMs: 60_000 });
    expect(out).toBe(
      "flowrules: rate limit: 95 requests sent in the last 60 s, waiting 41.5 s for the window (the client's limit: --rate-limit, FLOWRULES_RATE_LIMIT or a profile's rate_limit; 0 = off)\n" +
        "flowrules: the service reports its rate limit used up: waiting 2.0 s for it to reset\n",
    );
    let json = "";
    clientEventLogger(jsonLogger({ write: (s) => (json += s) }))({
      type: "rate-limited",
      delayMs: 41_500,
      source: "client",
      reason: "window",
      budget: 31,
      windowMs: 60_000,
    });
    expect(lines(json)[0]).toMatchObject({
      level: "info",
      event: "request.rate_limited",
      delay_ms: 41_500,
      source: "client",
      reason: "window",
      budget: 31,
      window_ms: 60_000,
    });
  });
});

describe("withLogger and runLogged", () => {
  it("json mode turns plain stderr lines into message events (partial lines buffered, \\r redraws collapsed)", () => {
    let out = "";
    const io = withLogger(memoryIO(), jsonLogger({ write: (s) => (out += s) }));
    io.stderr("plan saved to x; ");
    expect(out).toBe("");
    io.stderr("journal y\n10%\r50%\r100%\n");
    expect(lines(out).map((l) => [l.event, l.text])).toEqual([
      ["message", "plan saved to x; journal y"],
      ["message", "100%"],
    ]);
    expect(io.stderrIsTTY).toBe(false);
  });

  it("text mode leaves stderr as it is", () => {
    const base = memoryIO();
    const io = withLogger(base, textLogger({ write: () => undefined }));
    io.stderr("human line\n");
    expect(base.err()).toBe("human line\n");
  });

  it("run.finished carries the exit code and counts tallied from the run's events", async () => {
    let out = "";
    const io = withLogger(memoryIO(), jsonLogger({ write: (s) => (out += s) }));
    let t = 1000;
    const code = await runLogged(
      io,
      "apply",
      { paths: ["rules/"] },
      async (inner) => {
        inner.log?.event("rule.planned", { rule: "a", changes: 2 });
        inner.log?.event("rule.planned", { rule: "b", changes: 3 });
        const outcome = (status: ChangeOutcome["status"], id: number): ChangeOutcome => ({
          status,
          change: {
            id: `a:abort:${id}`,
            rule: "a",
            instance_id: id,
            instance_name: "",
            process_id: 1,
            kind: "abort",
            request: { method: "POST", path: "/instances/bulk/abort", body: { ids: [id] } },
            before: {},
            after: {},
            precondition: { status: "running" },
          },
          ...(status === "stale" ? { reason: "changed since the plan" } : {}),
        });
        logOutcomes(inner.log ?? nullLogger, [
          outcome("applied", 1),
          outcome("applied", 2),
          outcome("stale", 3),
          outcome("failed", 4),
        ]);
        inner.log?.event("apply.finished", { requests: 7 });
        t = 1250;
        return 1;
      },
      () => t,
    );
    expect(code).toBe(1);
    const events = lines(out);
    expect(events[0]).toMatchObject({ event: "run.started", command: "apply", paths: ["rules/"] });
    expect(events.filter((e) => e.event === "change.applied").map((e) => e.instance_id)).toEqual([1, 2]);
    expect(events.find((e) => e.event === "change.skipped")).toMatchObject({
      instance_id: 3,
      status: "stale",
      reason: "changed since the plan",
      level: "warn",
    });
    expect(events.find((e) => e.event === "change.failed")).toMatchObject({ instance_id: 4, level: "error" });
    expect(events.at(-1)).toMatchObject({
      event: "run.finished",
      level: "error",
      command: "apply",
      exit_code: 1,
      duration_ms: 250,
      rules: 2,
      changes_planned: 5,
      applied: 2,
      skipped: 1,
      failed: 1,
      requests: 7,
    });
  });
});

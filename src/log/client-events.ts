/**
 * The API client's events as log events: retries and rate-limit pauses. Single requests are not logged: a run of
 * thousands of requests would drown the retries a person looks for (the run's request count is in `run.finished`).
 */
import type { ClientEvent } from "../api/index.js";
import type { Logger } from "./types.js";

export function clientEventLogger(log: Logger): (e: ClientEvent) => void {
  return (e) => {
    switch (e.type) {
      case "retry":
        log.event(
          "request.retried",
          { method: e.method, path: e.path, attempt: e.attempt, reason: e.reason, delay_ms: e.delayMs },
          "warn",
        );
        return;
      case "rate-limited":
        log.event(
          "request.rate_limited",
          {
            delay_ms: e.delayMs,
            source: e.source ?? "server",
            ...(e.reason ? { reason: e.reason } : {}),
            ...(e.budget === undefined ? {} : { budget: e.budget }),
            ...(e.windowMs === undefined ? {} : { window_ms: e.windowMs }),
          },
          e.source === "client" ? "info" : "warn",
        );
        return;
      case "request":
        return;
    }
  };
}

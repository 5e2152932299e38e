/** Sends the end-of-run notification of `plan` and `apply` and turns failed deliveries into warnings on stderr. */
import { deliveryWarning, notifyAll, type NotifyOptions } from "../notify/send.js";
import type { NotifyPayload } from "../render/notify/payload.js";
import type { CommandIO } from "../log/command-io.js";

export interface NotifySettings {
  urls: URL[];
  /** timeouts, attempts and backoff per receiver (defaults in src/notify/send.ts) */
  options?: NotifyOptions;
}

/** Never throws and never changes the exit code: a receiver's trouble is the receiver's. */
export async function sendNotification(
  settings: NotifySettings | undefined,
  payload: NotifyPayload,
  io: CommandIO,
): Promise<void> {
  if (!settings || settings.urls.length === 0) return;
  try {
    const deliveries = await notifyAll(settings.urls, payload, settings.options);
    for (const d of deliveries) {
      io.log?.event(
        "notify.sent",
        { target: d.target, ok: d.ok, attempts: d.attempts, ...(d.problem ? { problem: d.problem } : {}) },
        d.ok ? "debug" : "warn",
      );
      if (!d.ok) io.stderr(`${deliveryWarning(d)}\n`);
    }
  } catch (err) {
    io.stderr(`flowrules: warning: notification not sent: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

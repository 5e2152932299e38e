/** Shared set-up of the watch tests: a sandbox over loopback HTTP, rules in a temp folder, people's edits via the API. */
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { LogFields, Logger } from "../../src/log/index.js";
import { captureIO, type CapturedIO } from "../apply/helpers.js";

export { APPROVE_RULES } from "../helpers/rules.js";

export interface Event {
  name: string;
  fields: LogFields;
}

/** A CommandIO whose structured events are kept (JSON mode: no text lines). */
export function eventIO(): CapturedIO & { events: Event[] } {
  const events: Event[] = [];
  const log: Logger = { structured: true, event: (name, fields = {}) => void events.push({ name, fields }) };
  return { ...captureIO(), log, events };
}

/** A person completes step `step` of instance `id` through the API, as the product would. */
export async function personCompletes(sb: RunningSandbox, id: number, step: number): Promise<void> {
  const res = await fetch(`${sb.baseUrl}/instances/${id}/complete_step/`, {
    method: "POST",
    headers: { authorization: "Api-Key sandbox-admin", "content-type": "application/json" },
    body: JSON.stringify({ step_id: step, actions: [], mode: "complete" }),
  });
  if (res.status !== 200) throw new Error(`person's edit answered ${res.status}`);
}

export function runningAt(sb: RunningSandbox, processId: number, step: number): number[] {
  return sb.store
    .list(processId)
    .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(step))
    .map((i) => i.id);
}

/** Waits until `cond` holds, looking every 20 ms; fails after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A child's stderr as it comes, and a wait for a line matching a pattern (event-driven, no polling of files). */
export function stderrOf(child: import("node:child_process").ChildProcess): {
  text: () => string;
  saw: (re: RegExp, ms: number) => Promise<string>;
} {
  let text = "";
  const waiters: Array<{ re: RegExp; done: (line: string) => void }> = [];
  child.stderr?.on("data", (d: Buffer) => {
    text += d.toString();
    for (const w of [...waiters]) {
      const m = w.re.exec(text);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done(m[0]);
      }
    }
  });
  return {
    text: () => text,
    saw: (re, ms) =>
      new Promise((resolve, reject) => {
        const m = re.exec(text);
        if (m) return resolve(m[0]);
        const timer = setTimeout(
          () => reject(new Error(`timed out after ${ms} ms waiting for ${re} in:\n${text}`)),
          ms,
        );
        const onExit = (): void => {
          clearTimeout(timer);
          const again = re.exec(text);
          if (again) resolve(again[0]);
          else reject(new Error(`exited before ${re}:\n${text}`));
        };
        child.once("close", onExit);
        waiters.push({
          re,
          done: (line) => {
            clearTimeout(timer);
            child.off("close", onExit);
            resolve(line);
          },
        });
      }),
  };
}

/**
 * Secrets never reach a log line. Callers do not put the API key in fields, but an error message from a lower layer
 * could quote it, so the logger scrubs its final output as a last line of defence.
 */
import { redact } from "../api/errors.js";

const MASK = "[redacted]";

/** Returns a function that replaces every occurrence of each secret (ignoring empty or trivially short ones). */
export function redactor(secrets: ReadonlyArray<string | undefined>): (s: string) => string {
  // a 1–3 character "secret" would mask ordinary text everywhere; real keys are longer
  const list = [...new Set(secrets.filter((s): s is string => typeof s === "string" && s.length >= 4))];
  // longest first, so a secret containing another is masked whole
  list.sort((a, b) => b.length - a.length);
  if (list.length === 0) return (s) => s;
  return (s) => {
    let out = s;
    for (const secret of list) {
      // whole, and any long piece of a long key (src/api/errors.ts)
      out = redact(out, secret, MASK);
      // a JSON-escaped form of the secret (quotes, backslashes) is what a JSON line would carry
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join(MASK);
    }
    return out;
  };
}

/**
 * `flowrules history` as text: per cycle one line (its folder, when it started, whether it finished, its counts),
 * then one aligned row per change — time, outcome, rule, instance, kind and step, reason. Names and reasons come from
 * files and the service: every line goes through textSafe.
 */
import { textSafe } from "../escape.js";
import { table } from "../table.js";
import type { HistoryFormatter, HistoryOutcome } from "./types.js";

const WORD: Record<HistoryOutcome, string> = {
  applied: "applied",
  stale: "stale",
  failed: "failed",
  not_acted: "not acted on",
  not_sent: "not sent (stopped)",
  in_flight: "in flight (killed)",
  not_started: "not started (killed)",
};

export const historyText: HistoryFormatter = (doc) => {
  if (doc.cycles.length === 0) {
    return `${textSafe(`No cycle has applied anything in ${doc.state_dir}, and none failed or held a rule back (with --rule / --instance: none that concerns it).`)}\n`;
  }
  const out: string[] = [];
  for (const c of doc.cycles) {
    const counts = new Map<HistoryOutcome, number>();
    for (const ch of c.changes) counts.set(ch.outcome, (counts.get(ch.outcome) ?? 0) + 1);
    const said = [...counts].map(([o, n]) => `${n} ${WORD[o]}`).join(", ") || "no change";
    const why = c.cycle !== undefined ? `cycle ${c.cycle}${c.kind ? ` (${c.kind})` : ""}` : "cycle";
    const result =
      c.result === "failed"
        ? ", failed"
        : c.result === "partial"
          ? `, partly applied: held back ${(c.held ?? []).join(", ")}`
          : "";
    out.push(
      textSafe(
        `${why} ${c.folder ?? "(nothing applied)"}: ${c.started_at ?? "never started"}${c.finished ? "" : ", unfinished (the next watcher resumes it)"}${result}; ${said}`,
      ),
    );
    for (const e of c.errors ?? []) out.push(textSafe(`  error: ${e}`));
    const rows = c.changes.map((ch) =>
      [
        ch.at ?? "-",
        WORD[ch.outcome],
        ch.rule,
        ch.instance_name ? `${ch.instance_id} ${ch.instance_name}` : String(ch.instance_id),
        `${ch.kind}${ch.step_id !== undefined ? ` step ${ch.step_id}` : ""}`,
        ch.reason ?? "",
      ].map(textSafe),
    );
    if (rows.length > 0) out.push(...table(rows, { indent: "  " }));
  }
  return `${out.join("\n")}\n`;
};

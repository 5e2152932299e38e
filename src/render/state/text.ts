/** `flowrules state show`: what a state dir holds, for a person; and the line of `flowrules state clear`. */
import type { ClearReport, StateReport } from "../../state/show.js";
import { textSafeLines } from "../escape.js";
import { table } from "../table.js";
import { ENV } from "../../model/env-names.js";

const n = (x: number): string => x.toLocaleString("en-US");

function trust(r: StateReport): string {
  if (r.newer) return "not checked: a newer flowrules wrote it (this one leaves it as it is)";
  if (r.same_key === false) return "made with another API key: not used, the next run reads everything";
  if (r.verifies === true) return "verifies with this API key";
  if (r.verifies === false) return "does not verify with this API key: not used, the next run reads everything";
  return r.unusable
    ? "not checked (the file cannot be read in full)"
    : `not checked: no API key (set ${ENV.apiKey} or choose a --profile)`;
}

export function stateText(r: StateReport): string {
  const lines: string[] = [`State dir ${r.dir}`];
  const rows: string[][] = [];
  if (r.size_bytes === null)
    rows.push(["state", "none yet: the next run with --state reads everything and writes one"]);
  else {
    rows.push(
      [
        "file",
        `${r.file}, ${n(r.size_bytes)} bytes${r.format_version !== null ? `, state format ${r.format_version}` : ""}${r.flowrules_version ? ` (flowrules ${r.flowrules_version})` : ""}`,
      ],
      ["service", r.base_url ?? "?"],
      ["written", r.written_at ? `${r.written_at}, by the run of ${r.run_at ?? "?"}` : "?"],
      ["MAC", trust(r)],
    );
    if (r.unusable && r.same_key !== false && r.verifies !== false) rows.push(["usable", `no: it ${r.unusable}`]);
  }
  const locks = r.locks.map(
    (l) =>
      `${l.file}: ${l.stale ? `left by ${l.holder} (${l.stale}); the next run takes it over` : `held by ${l.holder}`}`,
  );
  rows.push(["lock", locks.length === 0 ? "free" : (locks[0] ?? "")], ...locks.slice(1).map((l) => ["", l]));
  lines.push(...table(rows, { indent: "  " }));
  if (r.leftovers > 0)
    lines.push(
      `  ${n(r.leftovers)} temporary file${r.leftovers === 1 ? "" : "s"} of runs that died before their end (the next run removes them)`,
    );
  if (r.workflows.length > 0) {
    lines.push("");
    lines.push(
      ...table(
        [
          ["workflow", "bookmark", "last full read", "instances", "records", "field values", "listings"],
          ...r.workflows.map((w) => [
            String(w.workflow),
            w.bookmark ?? "-",
            w.partial
              ? `partial: ${n(w.partial.synced)}${w.partial.total !== null ? ` of ~${n(w.partial.total)}` : ""}`
              : (w.last_full_read ?? "-"),
            n(w.instances),
            n(w.records),
            n(w.field_values),
            n(w.listings),
          ]),
        ],
        { indent: "  ", align: ["right", "left", "left", "right", "right", "right", "right"], rule: true },
      ),
    );
  }
  return textSafeLines(`${lines.join("\n")}\n`);
}

export function clearText(r: ClearReport): string {
  if (r.removed.length === 0) return textSafeLines(`${r.dir}: no state to clear\n`);
  const bytes = r.removed.reduce((s, f) => s + f.bytes, 0);
  const files = r.removed.map((f) => f.file).join(", ");
  return textSafeLines(`removed ${files} (${n(bytes)} bytes): the next run with --state reads everything\n`);
}

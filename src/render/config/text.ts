/** `flowrules config`: one line per setting — its value and where it came from — then the check's line. */
import { textSafeLines } from "../escape.js";
import { table } from "../table.js";
import type { ConfigReport } from "./types.js";

const from = (source: string): string =>
  source === "default" || source.startsWith("not set") ? source : `from ${source}`;

export function configText(r: ConfigReport): string {
  const rows: string[][] = [
    [
      "config file",
      r.config_file.path ?? "none",
      r.config_file.source.startsWith("the nearest") || r.config_file.path === null
        ? r.config_file.source
        : from(r.config_file.source),
    ],
    ["profile", r.profile?.name ?? "none", r.profile ? from(r.profile.source) : ""],
    // the key's value is never shown: its line names where it comes from
    ...r.settings.map((s) => [
      s.setting,
      s.problem
        ? "refused (below)"
        : s.setting === "api key"
          ? s.source.startsWith("not set")
            ? "not set"
            : "set (never shown)"
          : (s.value ?? "not set"),
      from(s.source),
    ]),
  ];
  const lines = table(rows);
  for (const s of r.settings) if (s.problem) lines.push(`✗ ${s.setting}: ${s.problem}`);
  if (r.check) lines.push(`${r.check.ok ? "✓" : "✗"} ${r.check.message}`);
  return textSafeLines(`${lines.map((l) => l.trimEnd()).join("\n")}\n`);
}

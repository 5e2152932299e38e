/** GitHub Actions workflow commands: `::error file=…,line=…,col=…::message`, shown as annotations on the PR. */
import type { Diagnostic } from "../../rules/types.js";
import { plural } from "../../text/plural.js";
import { counts, type DiagnosticFormatter } from "./types.js";
import { textSafeLines } from "../escape.js";

/** Escaping of workflow commands: data escapes % CR LF; property values also : and , */
function escapeData(s: string): string {
  return textSafeLines(s).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

function annotation(d: Diagnostic): string {
  const props: string[] = [];
  if (d.file !== "") props.push(`file=${escapeProperty(d.file)}`);
  if (d.line > 0) props.push(`line=${d.line}`, `col=${d.col}`);
  props.push(`title=${escapeProperty(`flowrules ${d.code}${d.rule !== undefined ? ` (${d.rule})` : ""}`)}`);
  return `::${d.severity} ${props.join(",")}::${escapeData(d.message)}`;
}

export const github: DiagnosticFormatter = (diagnostics) => {
  const { errors, warnings } = counts(diagnostics);
  return [...diagnostics.map(annotation), `${plural(errors, "error")}, ${plural(warnings, "warning")}`, ""].join("\n");
};

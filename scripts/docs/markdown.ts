/** Text from a description made safe for a Markdown table cell: code spans kept as they are, the rest escaped. */
export function cell(s: string): string {
  return s
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\*<>[\]]/g, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : `\\${c}`))))
    .join("")
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

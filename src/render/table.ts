/**
 * Column alignment for terminal text, by display width: a CJK character takes two columns, an emoji two, a combining
 * accent none and colour codes none (string-width, after Unicode's East Asian Width), where `.length` counts UTF-16
 * units and misaligns every row with such a name. Every text view pads through here.
 */
import stringWidth from "string-width";

export type Align = "left" | "right";

export interface TableOptions {
  /** per column; default left */
  align?: readonly Align[];
  /** between columns; default two spaces */
  gap?: string;
  /** before every line */
  indent?: string;
  /** a line of dashes under the first row */
  rule?: boolean;
}

/** Columns the text takes in a terminal. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` padded with spaces to `width` display columns (never cut). */
export function padDisplay(text: string, width: number, align: Align = "left"): string {
  const fill = " ".repeat(Math.max(0, width - displayWidth(text)));
  return align === "left" ? text + fill : fill + text;
}

/** Rows of cells → aligned lines (trailing spaces trimmed). A row may have fewer cells than others. */
export function table(rows: ReadonlyArray<readonly string[]>, opts: TableOptions = {}): string[] {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(0, ...rows.map((r) => displayWidth(r[i] ?? ""))));
  const gap = opts.gap ?? "  ";
  const line = (cells: readonly string[]): string =>
    `${opts.indent ?? ""}${cells.map((c, i) => padDisplay(c, widths[i] ?? 0, opts.align?.[i] ?? "left")).join(gap)}`.trimEnd();
  const lines = rows.map(line);
  if (opts.rule && lines.length > 0) lines.splice(1, 0, line(widths.map((w) => "-".repeat(w))));
  return lines;
}

/**
 * The progress line on a terminal: one line redrawn in place with `\r` and "erase line", cut to the terminal's
 * width so it never wraps (a wrapped line cannot be redrawn with `\r`). A library (log-update, cli-progress) would
 * bring several dependencies for what is one line here; plain lines the command writes meanwhile go through
 * `clear()` first, so they never mix with the progress line.
 */
import { textSafe } from "../escape.js";

const ERASE = "\r\u001b[2K";

export class TerminalLine {
  private shown = false;
  private last = "";
  private lastDraw = 0;

  constructor(
    private readonly write: (s: string) => void,
    private readonly columns: () => number,
    /** at most one redraw this often (ms), so thousands of updates cost a handful of writes */
    private readonly minIntervalMs = 200,
    private readonly now: () => number = Date.now,
  ) {}

  /** Shows `text`, unless the line was drawn moments ago (then `force` draws it anyway). */
  draw(text: string, force = false): void {
    this.last = text;
    const t = this.now();
    if (!force && this.shown && t - this.lastDraw < this.minIntervalMs) return;
    this.lastDraw = t;
    const width = Math.max(20, this.columns() - 1);
    // a rule name holding controls must not move the cursor or erase more than this line
    const safe = textSafe(text);
    const cut = safe.length > width ? `${safe.slice(0, width - 1)}…` : safe;
    this.write(`${ERASE}${cut}`);
    this.shown = true;
  }

  /** Removes the line (before a plain line is written); the next draw brings it back. */
  clear(): void {
    if (!this.shown) return;
    this.write(ERASE);
    this.shown = false;
  }

  /** Leaves the last state on screen and moves to a new line. */
  finish(): void {
    if (this.last === "") return;
    this.draw(this.last, true);
    this.write("\n");
    this.shown = false;
    this.last = "";
  }
}

/**
 * Escaping by medium: names, tags, titles and values come from the service and from files, and
 * a view prints them where a terminal or a Markdown renderer would obey what they carry — `ESC[2K ESC[1A` erases
 * lines on a terminal, `</details><img src=…>` closes a block and adds markup in a pull-request comment. Every view
 * passes such data through the helper of its medium here; the HTML view escapes with its own `esc` (html.ts).
 */
import { Scalar, stringify } from "#yaml";
import { UNSAFE_CHARS, visibleJson } from "../text/visible-json.js";

/** JSON text (JSON.stringify's) with every control and reordering character it leaves raw written as `\uNNNN`. */
export const jsonSafe = visibleJson;

/**
 * Characters a terminal acts on or that reorder what is shown: C0 controls, DEL, C1 controls (0x9b is a CSI on
 * many terminals), bidirectional overrides and isolates, zero-width characters, line and paragraph separators.
 */
const UNSAFE = new RegExp(`[${UNSAFE_CHARS}]`, "g");

function visibleChar(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Text for a terminal or a log line: every control and reordering character shown as `\xNN` / `\uNNNN`. */
export function textSafe(s: string): string {
  return s.replace(UNSAFE, visibleChar);
}

/** textSafe for lines that may hold several lines of text: newlines and tabs kept, every other control shown. */
export function textSafeLines(s: string): string {
  return s.replace(UNSAFE, (ch) => (ch === "\n" || ch === "\t" ? ch : visibleChar(ch)));
}

/**
 * Characters that make markup in GitHub/GitLab Markdown — HTML, table cells, links and images, code spans, escapes,
 * mentions — written as HTML character references. Emphasis (`*`, `_`) is left: it can only restyle text.
 */
const MARKDOWN_SPECIAL = /[&<>`|[\]\\@]/g;

/**
 * Text for Markdown outside code: on one line, controls shown (textSafe), HTML and Markdown markup neutralised as
 * character references (`<` → `&#60;`, `|` → `&#124;`, `@` → `&#64;` so no one is mentioned), which every Markdown
 * renderer shows as the character itself.
 */
export function markdownSafe(s: string): string {
  return textSafe(s.replace(/\r?\n/g, " ")).replace(MARKDOWN_SPECIAL, (c) => `&#${c.charCodeAt(0)};`);
}

/** Text inside a Markdown code fence or span: shown literally there, so only controls and line breaks matter. */
export function markdownCodeSafe(s: string): string {
  return textSafe(s.replace(/\r?\n/g, " "));
}

/** The colour codes the views use (picocolors' bold, dim, red, green, yellow, cyan and their resets), and no other. */
const UNSAFE_OR_SGR = new RegExp(`(\\x1b\\[(?:1|2|22|31|32|33|36|39)m)|${UNSAFE.source}`, "g");

/**
 * A whole view for a terminal, built with data in it: newlines and tabs kept, every other control shown (textSafe).
 * With `color`, the views' own colour codes pass: at most bold, dim or one of their colours can then come from data,
 * never a cursor move, an erase, hidden text, a title or a link.
 */
export function terminalSafe(view: string, color: boolean): string {
  if (!color) return textSafeLines(view);
  return view.replace(UNSAFE_OR_SGR, (m: string, sgr: string | undefined) =>
    sgr !== undefined || m === "\n" || m === "\t" ? m : visibleChar(m),
  );
}

/**
 * Text for chat webhooks (Slack, Mattermost, Teams): controls shown, and `&`, `<`, `>` as the entities Slack's
 * message format asks for, so `<!channel>` or `<https://…|link>` in a name is shown, not obeyed.
 */
export function chatSafe(s: string): string {
  return textSafeLines(s).replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

/**
 * A YAML document of `value` whose text shows no control: a string holding one is written double-quoted, where
 * `\uNNNN` is YAML's own escape, so the document reads back to the very same value.
 */
export function yamlSafe(value: unknown): string {
  const quoted = (_key: unknown, v: unknown): unknown => {
    if (typeof v !== "string" || v.search(UNSAFE_ONE) < 0) return v;
    const s = new Scalar(v);
    s.type = "QUOTE_DOUBLE";
    return s;
  };
  return stringify(value, quoted, { lineWidth: 0 }).replace(
    UNSAFE_RAW,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** UNSAFE without the global flag, for a test that keeps no state between calls. */
const UNSAFE_ONE = new RegExp(UNSAFE.source);
/** What YAML leaves raw inside double quotes (it escapes C0 itself): C1, DEL and the invisible and reordering ones. */
const UNSAFE_RAW = new RegExp(UNSAFE.source.replace("\\u0000-\\u001f", ""), "g");

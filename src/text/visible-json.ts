/**
 * Characters a terminal acts on or that reorder or hide text, and JSON text that shows them as
 * `\uNNNN` escapes. JSON.stringify escapes C0 controls itself but leaves DEL, C1 (0x9b is a CSI on many terminals),
 * bidirectional overrides, zero-width characters and line separators raw; written as escapes they read back as the
 * very same strings. Here, below every layer, so the plan file's writer (src/plan) and the views (src/render) share it.
 */
export const UNSAFE_CHARS =
  "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff\\ufff9-\\ufffb";

/** UNSAFE_CHARS but C0, which JSON.stringify never leaves raw (and whose newlines and spaces make its layout). */
const RAW_IN_JSON = new RegExp(`[${UNSAFE_CHARS.replace("\\u0000-\\u001f", "")}]`, "g");

/** JSON text (from JSON.stringify) with the characters it leaves raw written as escapes: the same value, visible. */
export function visibleJson(text: string): string {
  return text.replace(RAW_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The API key's characters, checked as the settings are read, before any rule file or request. An HTTP header carries
 * only visible ASCII here: a key with an invisible or non-ASCII character (a zero-width space pasted with it, a
 * non-breaking space) is refused by the HTTP library request by request, which once left a run with no output and
 * exit 0 (docs/safety.md). The message names where the key came from (`source`, words the caller gives:
 * this room knows no variable) and the position, never the character's neighbours, so no piece of the key is printed.
 */

/** undefined when the key can go into a header as is; otherwise one line saying what is wrong and where. */
export function apiKeyProblem(key: string, source = "the API key"): string | undefined {
  const chars = [...key];
  const at = chars.findIndex((c) => !/^[\x21-\x7e]$/.test(c));
  if (at < 0) return undefined;
  const c = chars[at] ?? "";
  const code = `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
  const what =
    c === " "
      ? "a space"
      : /[\u0000-\u001f\u007f]/.test(c)
        ? `a control character (${code})`
        : `an invisible or non-ASCII character (${code})`;
  return `${source} holds ${what} at position ${at + 1} of ${chars.length}: an API key is visible ASCII only (check for a pasted space or line break)`;
}

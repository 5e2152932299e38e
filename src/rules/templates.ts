/** Splits a string into literal text and `{{ expr }}` parts, tolerating braces and strings inside the expression. */

export type TemplatePart = { t: "text"; text: string } | { t: "expr"; text: string; start: number };

export type SplitResult = { ok: true; parts: TemplatePart[] } | { ok: false; at: number; message: string };

export function hasTemplate(s: string): boolean {
  return s.includes("{{");
}

/** Index just past the `}}` closing the expression that starts at `from`, or -1. */
function findClose(s: string, from: number): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'" || c === "`") {
      // skip a JSONata string or quoted name; a `}}` inside it does not close the template
      const q = c;
      i++;
      while (i < s.length && s[i] !== q) i += s[i] === "\\" ? 2 : 1;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      if (depth === 0 && s[i + 1] === "}") return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}

export function splitTemplate(s: string): SplitResult {
  const parts: TemplatePart[] = [];
  let i = 0;
  while (i < s.length) {
    const open = s.indexOf("{{", i);
    if (open < 0) {
      parts.push({ t: "text", text: s.slice(i) });
      break;
    }
    if (open > i) parts.push({ t: "text", text: s.slice(i, open) });
    const close = findClose(s, open + 2);
    if (close < 0) return { ok: false, at: open, message: 'unterminated "{{": close the template with "}}"' };
    const text = s.slice(open + 2, close);
    if (text.trim() === "") return { ok: false, at: open, message: 'empty template "{{ }}": write a JSONata expression inside' };
    parts.push({ t: "expr", text, start: open + 2 });
    i = close + 2;
  }
  return { ok: true, parts };
}

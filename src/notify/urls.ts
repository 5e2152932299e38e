/**
 * Notification targets (`--notify URL`, repeatable, or its variable, comma-separated: src/model/settings-table.ts). Checked before any
 * request to the service, like the base URL: only https://, or http:// to this machine, unless --insecure-http.
 */
import { isLoopbackHost } from "../api/url-guard.js";
import { UserError } from "../model/errors.js";

/** A URL for messages: no credentials, no query (a webhook's secret often lives in its path or query). */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.length > 1 ? "/…" : "/"}`;
}

export function parseNotifyUrl(raw: string, insecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UserError(
      `--notify: ${JSON.stringify(raw.slice(0, 80))} is not a URL; give an https:// address of an incoming webhook`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UserError(`--notify: ${url.protocol}// is not allowed; give an https:// address of an incoming webhook`);
  }
  if (url.protocol === "http:" && !insecureHttp && !isLoopbackHost(url.hostname)) {
    throw new UserError(
      `--notify: plain http:// to ${url.hostname} would send the summary unencrypted; use https://, or --insecure-http if you must`,
    );
  }
  return url;
}

/** The flag's URLs, else the variable's value (comma-separated, read by src/cli); duplicates sent once. */
export function notifyUrls(flags: readonly string[], commaList: string, insecureHttp: boolean): URL[] {
  const raw = flags.length > 0 ? flags : commaList.split(",");
  const urls = raw
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => parseNotifyUrl(s, insecureHttp));
  const seen = new Set<string>();
  return urls.filter((u) => (seen.has(u.href) ? false : (seen.add(u.href), true)));
}

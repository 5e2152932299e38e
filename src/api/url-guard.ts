/**
 * Base-URL normalisation and the two guards that keep the API key where it belongs: no plain http:// to a
 * non-loopback host, and pagination links followed only on the configured origin and only under the base path.
 */
import { isIP } from "node:net";
import { InsecureUrlError } from "./errors.js";

export interface BaseUrl {
  /** normalised, no trailing slash, e.g. "https://host/api" */
  href: string;
  /** "https://host" */
  origin: string;
  /** path prefix without trailing slash, e.g. "/api" or "" */
  basePath: string;
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host === "::1") return true;
  if (isIP(host) === 4) return host.split(".")[0] === "127";
  return false;
}

/**
 * A URL as messages may show it: a user name and password written into it (`https://bob:secret@host/`) become `***`.
 * Judged by the URL parser, never by searching the text: a password holding `@`, a space or a tab is userinfo to the
 * parser (which is what a client would send), so the text shown is rebuilt from the parsed parts and keeps none of it.
 * Text the parser refuses is shown only when it holds no `@` (without one it has no userinfo to hide).
 */
export function maskUserinfo(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.includes("@") ? "(a URL that cannot be parsed, not shown: it may carry a credential)" : raw;
  }
  const userinfo = url.username !== "" || url.password !== "" ? "***@" : "";
  // a query or fragment may carry a token too; only that one is there is said
  const rest = `${url.search !== "" ? "?…" : ""}${url.hash !== "" ? "#…" : ""}`;
  if (url.host === "" && userinfo === "") return `${url.protocol}${url.pathname}${rest}`;
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${rest}`;
}

/** Parses and checks the base URL; throws TypeError when unusable, InsecureUrlError for plain http to a remote host. */
export function normaliseBaseUrl(raw: string, insecureHttp: boolean): BaseUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`invalid base URL: ${JSON.stringify(maskUserinfo(raw))}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError(`base URL must be http:// or https://, got ${url.protocol}`);
  }
  if (url.username || url.password) throw new TypeError("base URL must not contain credentials");
  if (url.search || url.hash) throw new TypeError("base URL must not contain a query or fragment");
  if (url.protocol === "http:" && !insecureHttp && !isLoopbackHost(url.hostname)) {
    throw new InsecureUrlError(url.host);
  }
  const basePath = url.pathname.replace(/\/+$/, "");
  return { href: `${url.origin}${basePath}`, origin: url.origin, basePath };
}

/**
 * A `next` link (absolute or relative) as a path relative to the base URL, or null when its path leaves the API.
 *
 * Only the link's path and query are used: the request goes to the configured origin whatever host, scheme or port
 * the link names. A service behind a proxy writes its own internal host (`http://backend.internal:8000/api/…`),
 * `https` for `http`, `localhost` for 127.0.0.1 — and the key never goes to any host but the configured one.
 * A relative link is read against the page it came from (`from`, relative to the base URL).
 */
export function relativeLink(base: BaseUrl, link: string, from = "/"): string | null {
  let url: URL;
  try {
    const page = new URL(`${base.href}${from.startsWith("/") ? from : `/${from}`}`);
    url = new URL(link.trim(), page);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  // resolve dot segments before judging the path, so /api/../admin/ cannot pass as under /api
  const path = url.pathname;
  if (/(^|\/)\.\.?(\/|$)|%2e%2e|%2f/i.test(path)) return null;
  if (!path.startsWith(`${base.basePath}/`)) return null;
  return path.slice(base.basePath.length) + url.search;
}

/** The path of a link without origin or query, for error messages (the query may carry ids or cursors). */
export function linkPath(link: string): string {
  try {
    return new URL(link, "http://x").pathname;
  } catch {
    return link.split("?")[0]?.slice(0, 100) ?? "";
  }
}

/** Origin and path of a link without its query, for error messages. */
export function describeLink(link: string): string {
  try {
    const url = new URL(link);
    return `${url.origin}${url.pathname}`;
  } catch {
    return link.slice(0, 200);
  }
}

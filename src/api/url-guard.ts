/**
 * Base-URL normalisation and the two guards that keep the API key where it belongs: no plain http:// to a
 * non-loopback host, and no following of links that leave the base URL.
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

/** Parses and checks the base URL; throws TypeError when unusable, InsecureUrlError for plain http to a remote host. */
export function normaliseBaseUrl(raw: string, insecureHttp: boolean): BaseUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`invalid base URL: ${JSON.stringify(raw)}`);
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
 * A `next` link (absolute or relative) as a path relative to the base URL, or null when it points elsewhere
 * (another origin, or outside the base path): the caller refuses it.
 */
export function relativeLink(base: BaseUrl, link: string): string | null {
  let url: URL;
  try {
    url = new URL(link, `${base.href}/`);
  } catch {
    return null;
  }
  if (url.origin !== base.origin) return null;
  if (!url.pathname.startsWith(`${base.basePath}/`)) return null;
  return url.pathname.slice(base.basePath.length) + url.search;
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

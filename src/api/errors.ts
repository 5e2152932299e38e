/**
 * Typed errors of the API client. Every message is built from method, path, status and the service's own words —
 * never from request headers — and is passed through `redact` as well, so the API key cannot leak even if a server
 * echoes it back.
 */
import { STATUS_CODES } from "node:http";

/** Common base: `err instanceof FlowrulesApiError` catches everything the client throws on purpose. */
export class FlowrulesApiError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The service answered with a status >= 300 (after any retries). */
export class ApiError extends FlowrulesApiError {
  readonly status: number;
  readonly method: string;
  /** request path and query, relative to the base URL */
  readonly path: string;
  /** the service's `{"detail"}` if any, else a short excerpt of the body */
  readonly detail: string;
  /** how many HTTP requests this call sent */
  readonly attempts: number;

  constructor(init: { status: number; method: string; path: string; detail: string; attempts: number }) {
    const reason = STATUS_CODES[init.status] ?? "";
    super(`${init.method} ${init.path} → ${init.status}${reason ? ` ${reason}` : ""}${init.detail ? `: ${init.detail}` : ""}`);
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.detail = init.detail;
    this.attempts = init.attempts;
  }
}

/**
 * A POST that may have reached the server, but no usable answer came back: the connection broke after the request
 * was (possibly) written, the request timed out, or a gateway answered 500/502/503/504. The change may or may not have
 * been applied; the caller must look (re-read the instance) before it tries again. Never retried automatically.
 */
export class OutcomeUnknownError extends FlowrulesApiError {
  readonly method: string;
  readonly path: string;
  /** the JSON body that was sent */
  readonly body: unknown;
  /** what went wrong, e.g. "connection reset", "timed out after 30000 ms", "503 Service Unavailable" */
  readonly reason: string;
  /** the HTTP status, when a (gateway) status line came back */
  readonly status: number | undefined;

  constructor(init: { method: string; path: string; body: unknown; reason: string; status?: number; cause?: unknown }) {
    super(
      `${init.method} ${init.path}: outcome unknown (${init.reason}); the change may or may not have been applied — ` +
        `check the instance before retrying`,
      { cause: init.cause },
    );
    this.method = init.method;
    this.path = init.path;
    this.body = init.body;
    this.reason = init.reason;
    this.status = init.status;
  }
}

/** A 2xx whose body is not JSON or does not fit the schema of the endpoint. Not retried: the answer would be the same. */
export class ResponseShapeError extends FlowrulesApiError {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** JSONPath of the first mismatch (`$.results[3].id`), or undefined when the body is not JSON at all */
  readonly jsonPath: string | undefined;
  readonly problem: string;

  constructor(init: { method: string; path: string; status: number; what: string; jsonPath?: string; problem: string }) {
    super(
      init.jsonPath === undefined
        ? `${init.method} ${init.path}: ${init.problem}`
        : `${init.method} ${init.path}: response does not match ${init.what} at ${init.jsonPath}: ${init.problem}`,
    );
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.jsonPath = init.jsonPath;
    this.problem = init.problem;
  }
}

/**
 * No HTTP answer: connection errors or timeouts, after the retries allowed (GET), or a POST that surely never left
 * (connection refused, DNS failure) and could not be sent within the retry budget — so it was NOT applied.
 */
export class TransportError extends FlowrulesApiError {
  readonly method: string;
  readonly path: string;
  readonly reason: string;
  readonly attempts: number;
  /** true when the request surely never reached the server (nothing can have been applied) */
  readonly neverSent: boolean;

  constructor(init: { method: string; path: string; reason: string; attempts: number; neverSent: boolean; cause?: unknown }) {
    super(
      `${init.method} ${init.path}: ${init.reason} (${init.attempts} attempt${init.attempts === 1 ? "" : "s"})`,
      { cause: init.cause },
    );
    this.method = init.method;
    this.path = init.path;
    this.reason = init.reason;
    this.attempts = init.attempts;
    this.neverSent = init.neverSent;
  }
}

/** Plain http:// to a host that is not loopback, without `insecureHttp`: thrown by createClient, before any request. */
export class InsecureUrlError extends FlowrulesApiError {
  readonly host: string;

  constructor(host: string) {
    super(
      `refusing plain http:// to ${host}: the API key would cross the network unencrypted; ` +
        `use https:// or allow it explicitly (--insecure-http)`,
    );
    this.host = host;
  }
}

/** A pagination link that leaves the base URL (another origin or path): refused so the key is never sent elsewhere. */
export class UnsafeLinkError extends FlowrulesApiError {
  readonly method: string;
  readonly path: string;
  /** origin and path of the refused link (its query is dropped) */
  readonly link: string;

  constructor(init: { method: string; path: string; link: string }) {
    super(`${init.method} ${init.path}: refusing to follow the next link ${init.link}: it is outside the base URL`);
    this.method = init.method;
    this.path = init.path;
    this.link = init.link;
  }
}

/** The client was used after close(). */
export class ClientClosedError extends FlowrulesApiError {
  constructor() {
    super("the API client is closed");
  }
}

/** Below this length a key is only masked whole: its 8-character pieces could be ordinary words. */
const PARTIAL_FROM = 20;
/** The shortest piece of a long key that is masked on its own (a server echoing "k-1a2b3c4d…" leaks half a key). */
const PIECE = 8;

/**
 * Replaces every occurrence of the secret in a text, and of any piece of 8 or more characters of a secret of 20 or
 * more (defence in depth for bodies and low-level error messages: a server may echo part of the key back).
 */
export function redact(text: string, secret: string, mask = "[REDACTED]"): string {
  if (secret.length < 3) return text;
  let out = text.split(secret).join(mask);
  if (secret.length < PARTIAL_FROM || out.length < PIECE) return out;
  const pieces = new Set<string>();
  for (let i = 0; i + PIECE <= secret.length; i++) pieces.add(secret.slice(i, i + PIECE));
  let result = "";
  let i = 0;
  while (i < out.length) {
    if (i + PIECE <= out.length && pieces.has(out.slice(i, i + PIECE))) {
      let end = i + PIECE;
      while (end < out.length && secret.includes(out.slice(i, end + 1))) end++;
      result += mask;
      i = end;
    } else {
      result += out[i];
      i++;
    }
  }
  out = result;
  return out;
}

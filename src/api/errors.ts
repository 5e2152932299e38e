/**
 * Typed errors of the API client. Every message is built from method, path, status and the service's own words —
 * never from request headers — and is passed through `redact` as well, so the API key cannot leak even if a server
 * echoes it back.
 */
import { STATUS_CODES } from "node:http";
import { plural } from "../text/plural.js";

/** One-line messages stay short: the service's own words are cut beyond this. */
const DETAIL_MAX = 120;

function short(text: string, max = DETAIL_MAX): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function queryParam(path: string, name: string): string | undefined {
  const q = path.indexOf("?");
  if (q < 0) return undefined;
  return new URLSearchParams(path.slice(q + 1)).get(name) ?? undefined;
}

/**
 * What a request asked, in words, from its method and path (relative to the base URL): "listing instances of
 * workflow 1042", "listing values of field 50222 (step 20111, workflow 1042), page 3", "reading instance 100234".
 * Messages name the request this way instead of by its URL, whose query may carry hundreds of instance ids; the
 * full path stays on the error object (`path`) for the JSON log.
 */
export function describeRequest(method: string, path: string): string {
  const bare = path.split("?")[0] ?? path;
  let m: RegExpExecArray | null;
  if ((m = /^\/v2\/processes\/(\d+)\/instances\/?$/.exec(bare))) return `listing instances of workflow ${m[1]}`;
  if ((m = /^\/processes\/(\d+)\/steps\/(\d+)\/actions\/(\d+)\/?$/.exec(bare))) {
    return `listing values of field ${m[3]} (step ${m[2]}, workflow ${m[1]}), page ${queryParam(path, "page") ?? "1"}`;
  }
  if ((m = /^\/instances\/(\d+)\/complete_step\/?$/.exec(bare))) return `changing a step of instance ${m[1]}`;
  if ((m = /^\/instances\/(\d+)\/?$/.exec(bare))) return `reading instance ${m[1]}`;
  if (/^\/instances\/bulk\/abort\/?$/.test(bare)) return "aborting instances";
  if (/^\/processes\/?$/.test(bare)) return "listing workflows";
  return `${method} ${short(bare, 80)}`;
}

/** Common base: `err instanceof FlowrulesApiError` catches everything the client throws on purpose. */
export class FlowrulesApiError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The service cannot be used at all by this run: it refused the API key (401, or a 403 before any request
 * succeeded), or it could not be reached once the retries ran out. Said once, as one line: the client
 * then fails every later call with this same error, sending nothing, and the commands stop with it.
 */
export class ServiceUnusableError extends FlowrulesApiError {}

/**
 * A POST not sent because its rate-limit slot would open only after the run's deadline (`--max-duration`): the run
 * ends on time instead of waiting for the window. Surely never sent.
 */
export class PastDeadlineNotSentError extends FlowrulesApiError {}

/**
 * A request not sent because the run is stopping (SIGTERM, SIGINT, SIGHUP: src/cli/signals.ts): it was waiting for
 * a rate-limit slot, a retry or a connection, and gave up at once. Surely never sent.
 */
export class StoppedNotSentError extends FlowrulesApiError {}

/**
 * GET /instances/{id}/ answered with the record of another instance (a broken cache or proxy): never taken as the
 * asked instance's record.
 */
export class WrongRecordError extends FlowrulesApiError {
  constructor(
    readonly asked: number,
    readonly answered: number,
  ) {
    super(`reading instance ${asked}: the service answered with the record of instance ${answered}`);
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

  /** what was asked, in words ("listing instances of workflow 1042, page 3") */
  readonly asked: string;

  /**
   * `note`: our own explanation, appended after the service's (clipped) words and never clipped itself, e.g. why a
   * 429 was not waited out
   */
  constructor(init: {
    status: number;
    method: string;
    path: string;
    detail: string;
    attempts: number;
    asked?: string;
    note?: string;
  }) {
    const reason = STATUS_CODES[init.status] ?? "";
    const asked = init.asked ?? describeRequest(init.method, init.path);
    // with a note of our own the service's words get less room, so the line stays short
    const said = [init.detail ? short(init.detail, init.note ? 40 : DETAIL_MAX) : "", init.note ?? ""]
      .filter(Boolean)
      .join("; ");
    super(`${asked}: ${init.status}${reason ? ` ${reason}` : ""}${said ? `: ${said}` : ""}`);
    this.asked = asked;
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

  readonly asked: string;

  constructor(init: {
    method: string;
    path: string;
    body: unknown;
    reason: string;
    status?: number;
    cause?: unknown;
    asked?: string;
  }) {
    const asked = init.asked ?? describeRequest(init.method, init.path);
    super(
      `${asked}: outcome unknown (${short(init.reason, 80)}); the change may or may not have been applied — ` +
        `check the instance before retrying`,
      { cause: init.cause },
    );
    this.asked = asked;
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

  readonly asked: string;

  constructor(init: {
    method: string;
    path: string;
    status: number;
    what: string;
    jsonPath?: string;
    problem: string;
    asked?: string;
  }) {
    const asked = init.asked ?? describeRequest(init.method, init.path);
    super(
      init.jsonPath === undefined
        ? `${asked}: ${short(init.problem, 150)}`
        : `${asked}: the answer does not match ${init.what} at ${short(init.jsonPath, 40)}: ${short(init.problem, 80)}`,
    );
    this.asked = asked;
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

  readonly asked: string;

  constructor(init: {
    method: string;
    path: string;
    reason: string;
    attempts: number;
    neverSent: boolean;
    cause?: unknown;
    asked?: string;
  }) {
    const asked = init.asked ?? describeRequest(init.method, init.path);
    super(`${asked}: ${short(init.reason, 100)} (${plural(init.attempts, "attempt")})`, { cause: init.cause });
    this.asked = asked;
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

  /** `how` names the switch in the caller's words (src/cli says `--insecure-http`; this layer knows no flag) */
  constructor(host: string, how = "the insecureHttp option") {
    super(
      `refusing plain http:// to ${host}: the API key would cross the network unencrypted; ` +
        `use https:// or allow it explicitly (${how})`,
    );
    this.host = host;
  }
}

/**
 * A pagination link whose path leaves the API (is not under the base URL's path): refused. Links under it are
 * followed on the configured origin whatever host they name, so the key never goes to another host.
 */
export class UnsafeLinkError extends FlowrulesApiError {
  readonly method: string;
  readonly path: string;
  /** path of the refused link (its origin and query are dropped) */
  readonly link: string;
  readonly asked: string;

  constructor(init: { method: string; path: string; link: string; basePath?: string; asked?: string }) {
    const asked = init.asked ?? describeRequest(init.method, init.path);
    super(
      `${asked}: refusing to follow the next link to ${short(init.link, 80)}: its path leaves the API (${init.basePath || "/"})`,
    );
    this.asked = asked;
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

/** Forms a server or a proxy may echo the key in besides the key itself: base64 (Basic auth, logs), URL-encoded. */
function encodedForms(secret: string): string[] {
  const b64 = Buffer.from(secret, "utf8").toString("base64");
  const forms = [
    b64,
    b64.replace(/=+$/, ""),
    Buffer.from(secret, "utf8").toString("base64url"),
    encodeURIComponent(secret),
  ];
  return [...new Set(forms)].filter((f) => f !== secret && f.length >= 8).sort((a, b) => b.length - a.length);
}

const WORD_CHAR = /[A-Za-z0-9]/;

/** ASCII letters in lower case, every other character as it is: the length stays, so positions match the text's. */
function foldCase(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Every occurrence of `needle` in `text`, in any case of its ASCII letters, replaced by `mask`. */
export function replaceFolded(text: string, needle: string, mask: string): string {
  const hay = foldCase(text);
  const want = foldCase(needle);
  let at = hay.indexOf(want);
  if (at < 0) return text;
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at) + mask;
    from = at + needle.length;
    at = hay.indexOf(want, from);
  }
  return out + text.slice(from);
}
/** A run of the key this long is masked wherever it stands. */
const LONG_PIECE = 12;
/** A run of the key in another case (a server that upper-cases its echo) this long is masked wherever it stands. */
const FOLDED_PIECE = 16;

/**
 * Replaces every occurrence of the secret in a text, whole or encoded (base64, base64url, URL-encoded), and of any
 * piece of 8 or more characters of a secret of 20 or more (defence in depth for bodies and low-level error messages:
 * a server may echo part of the key back). A piece of 8 to 11 characters is masked where it stands as a word of its
 * own; glued to letters or digits it is part of an ordinary word ("Deployments" sharing "Deployment" with a key) and
 * left, so text stays readable. A piece of 12 or more is masked wherever it stands.
 */
export function redact(text: string, secret: string, mask = "[REDACTED]"): string {
  if (secret.length < 3) return text;
  // without regard to case: a server (or a proxy, a log shipper) that upper-cases what it echoes still echoes the key
  let out = replaceFolded(text, secret, mask);
  for (const form of encodedForms(secret)) out = replaceFolded(out, form, mask);
  if (secret.length < PARTIAL_FROM || out.length < PIECE) return out;
  const pieces = new Set<string>();
  for (let i = 0; i + PIECE <= secret.length; i++) pieces.add(secret.slice(i, i + PIECE));
  // in another case, only a run no word shares by chance ("deployment+key" is a fine word beside a key holding
  // "Deployment+Key"): FOLDED_PIECE characters or more
  const key = foldCase(secret);
  const foldedPieces = new Set<string>();
  for (let i = 0; i + FOLDED_PIECE <= key.length; i++) foldedPieces.add(key.slice(i, i + FOLDED_PIECE));
  const folded = foldCase(out);
  let result = "";
  let i = 0;
  while (i < out.length) {
    if (i + PIECE <= out.length && pieces.has(out.slice(i, i + PIECE))) {
      let end = i + PIECE;
      while (end < out.length && secret.includes(out.slice(i, end + 1))) end++;
      // a short run glued to letters is part of a word; 12 characters shared with a key are never chance
      const inWord = end - i < LONG_PIECE && (WORD_CHAR.test(out[i - 1] ?? "") || WORD_CHAR.test(out[end] ?? ""));
      if (!inWord) {
        result += mask;
        i = end;
        continue;
      }
    }
    if (i + FOLDED_PIECE <= out.length && foldedPieces.has(folded.slice(i, i + FOLDED_PIECE))) {
      let end = i + FOLDED_PIECE;
      while (end < out.length && key.includes(folded.slice(i, end + 1))) end++;
      result += mask;
      i = end;
      continue;
    }
    result += out[i];
    i++;
  }
  out = result;
  return out;
}

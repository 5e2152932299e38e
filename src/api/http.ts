/**
 * One HTTP exchange over a keep-alive undici Pool, with a whole-exchange timeout. Never throws for network trouble:
 * it returns either the full response (status, headers, body text) or a classified failure that says whether the
 * request surely never reached the server — the fact that decides whether a POST may be retried.
 */
import { Pool, request } from "./undici-light.js";
import type { Pool as UndiciPool } from "undici";
import { errorMessage } from "../model/guards.js";

export interface HttpRequest {
  method: "GET" | "POST";
  /** absolute path on the origin, with query */
  path: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface HttpResponse {
  kind: "response";
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

export interface HttpFailure {
  kind: "failure";
  /** short description, e.g. "connection refused (ECONNREFUSED)", "timed out after 30000 ms" */
  reason: string;
  /** true only when the request cannot have reached the server (refused connect, DNS failure, connect timeout) */
  neverSent: boolean;
  /** false for failures another attempt will not fix (TLS certificate problems) */
  retryable: boolean;
  /** the status, when headers arrived but the body then failed */
  status?: number;
  cause: unknown;
}

export type HttpResult = HttpResponse | HttpFailure;

export interface TransportOptions {
  origin: string;
  connections: number;
  timeoutMs: number;
  /** a response body beyond this is cut off and the exchange fails (a broken or hostile server must not exhaust memory) */
  maxResponseBytes?: number;
}

/** Far beyond any page of 500 full records, far below what would exhaust memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Thrown while reading a body that outgrows the limit. */
class ResponseTooLarge extends Error {}

/** Errors raised while opening the connection: nothing was written to the server. */
const CONNECT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "UND_ERR_CONNECT_TIMEOUT"]);
const CONNECT_SYSCALLS = new Set(["connect", "getaddrinfo"]);

function errorField(err: unknown, field: "code" | "syscall"): string | undefined {
  // undici sometimes wraps the system error; look one level down too
  for (let e: unknown = err, depth = 0; e && depth < 3; depth++) {
    if (typeof e === "object" && e !== null && field in e) {
      const v = (e as Record<string, unknown>)[field];
      if (typeof v === "string") return v;
    }
    e = typeof e === "object" && e !== null && "cause" in e ? (e as { cause?: unknown }).cause : undefined;
  }
  return undefined;
}

export function classifyFailure(err: unknown, timedOut: boolean, timeoutMs: number): Omit<HttpFailure, "kind"> {
  if (timedOut) return { reason: `timed out after ${timeoutMs} ms`, neverSent: false, retryable: true, cause: err };
  const code = errorField(err, "code") ?? "";
  const syscall = errorField(err, "syscall") ?? "";
  const message = errorMessage(err);
  if (code === "UND_ERR_CONNECT_TIMEOUT")
    return { reason: "connect timeout", neverSent: true, retryable: true, cause: err };
  if (CONNECT_CODES.has(code) || CONNECT_SYSCALLS.has(syscall)) {
    return { reason: `could not connect (${code || message})`, neverSent: true, retryable: true, cause: err };
  }
  if (/CERT|TLS|SSL/i.test(code))
    return { reason: `TLS failure (${code})`, neverSent: true, retryable: false, cause: err };
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") {
    return { reason: `connection closed by the server (${code})`, neverSent: false, retryable: true, cause: err };
  }
  return { reason: code ? `${message} (${code})` : message, neverSent: false, retryable: true, cause: err };
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(raw)) out[k.toLowerCase()] = Array.isArray(v) ? v[0] : v;
  return out;
}

export class HttpTransport {
  private readonly pool: UndiciPool;
  private readonly maxResponseBytes: number;

  constructor(opts: TransportOptions) {
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.pool = new Pool(opts.origin, {
      connections: opts.connections,
      // connect failures surface as UND_ERR_CONNECT_TIMEOUT (surely not sent) before our whole-exchange timeout
      connectTimeout: Math.max(1, Math.min(10_000, Math.floor(opts.timeoutMs * 0.8))),
      // keep-alive, but retire idle sockets early: a POST written to a socket the server just closed is "outcome unknown"
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
      // our own AbortController governs; undici's phase timers are only a backstop
      headersTimeout: opts.timeoutMs + 5_000,
      bodyTimeout: opts.timeoutMs + 5_000,
    });
  }

  async send(req: HttpRequest): Promise<HttpResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, req.timeoutMs);
    let status: number | undefined;
    try {
      const res = await request(this.pool, {
        method: req.method,
        path: req.path,
        headers: req.headers,
        body: req.body,
        signal: controller.signal,
      });
      status = res.statusCode;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        size += buf.length;
        if (size > this.maxResponseBytes) {
          res.body.destroy();
          throw new ResponseTooLarge(`response body larger than ${this.maxResponseBytes} bytes`);
        }
        chunks.push(buf);
      }
      const text = Buffer.concat(chunks).toString("utf8");
      return { kind: "response", status: res.statusCode, headers: flattenHeaders(res.headers), text };
    } catch (err) {
      if (err instanceof ResponseTooLarge) {
        // asking again brings the same answer; a POST's outcome stays unknown (neverSent is false)
        return {
          kind: "failure",
          reason: err.message,
          neverSent: false,
          retryable: false,
          cause: err,
          ...(status === undefined ? {} : { status }),
        };
      }
      const failure = classifyFailure(err, timedOut, req.timeoutMs);
      return status === undefined
        ? { kind: "failure", ...failure }
        : { kind: "failure", ...failure, status, neverSent: false };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

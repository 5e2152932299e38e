/**
 * The HTTP server: request log, faults, body limits, routing, auth, error answers. Every failure becomes a JSON
 * answer `{"detail": "..."}`; nothing a client sends can crash the process.
 *
 * Pipeline for /api requests: read body (413) → latency → rate limit (429) → random failure (503) → route (404/405)
 * → auth (401) → handler → for a successful POST, maybe a reset fault (applied, then the socket is destroyed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { authenticate } from "./access.js";
import { clockControl, peopleControl } from "./control.js";
import { bodyForLog, decodeBody, readBody, type DecodedBody } from "./body.js";
import type { ApiResponse, RequestContext } from "./context.js";
import type { CursorCodec } from "./cursor.js";
import { HttpError } from "./errors.js";
import type { Faults } from "./faults.js";
import { Quirks } from "./quirks.js";
import { Query, queryRecord } from "./query.js";
import type { RequestLog, RequestLogEntry } from "./request-log.js";
import { API_ROUTES, allowHeader, matchRoute } from "./routes.js";
import type { SandboxStore } from "./store.js";
import { publicTracking } from "./tracking.js";

export interface ServerDeps {
  store: SandboxStore;
  log: RequestLog;
  faults: Faults;
  cursors: CursorCodec;
  /** answers as a real service gives them (quirks.ts); none by default */
  quirks?: Quirks;
}

/**
 * Clients that send slowly (slowloris) are cut off: headers must arrive within `headersMs`, the whole request within
 * `requestMs`, checked every `checkEveryMs`. Node's defaults (60 s, 300 s, checked every 30 s) let a few hundred
 * idle sockets hold the sandbox for minutes.
 */
export interface ServerTimeouts {
  headersMs: number;
  requestMs: number;
  checkEveryMs: number;
}

export const SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, checkEveryMs: 1_000 };

export function createSandboxServer(deps: ServerDeps, timeouts: ServerTimeouts = SERVER_TIMEOUTS): Server {
  const options = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: timeouts.checkEveryMs,
  };
  const server = createServer(options, (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      // Last resort: a bug in the sandbox is a 500, never a crash.
      process.stderr.write(
        `sandbox: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      if (!res.headersSent && !res.destroyed)
        send(req, res, { status: 500, body: { detail: "Internal sandbox error." } });
    });
  });
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const answer = (status: string, detail: string): void => {
      const body = JSON.stringify({ detail });
      socket.end(
        `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT")
      answer("408 Request Timeout", "Request timeout: the request did not arrive in time.");
    else if (err.code === "HPE_HEADER_OVERFLOW")
      answer("431 Request Header Fields Too Large", "Request headers too large.");
    else answer("400 Bad Request", "Bad request.");
  });
  return server;
}

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? "GET").toUpperCase();
  let url: URL;
  try {
    url = new URL(req.url ?? "/", "http://127.0.0.1");
  } catch {
    send(req, res, { status: 400, body: { detail: "Malformed request URL." } });
    return;
  }
  const path = url.pathname;

  if (path === "/__sandbox/people" || path === "/__sandbox/clock") {
    let value: unknown = undefined;
    try {
      const decoded = await readAndDecode(req);
      if (decoded.kind === "json") value = decoded.value;
      else if (decoded.kind !== "none") value = "not JSON";
    } catch (err) {
      send(req, res, errorResponse(err));
      return;
    }
    send(
      req,
      res,
      path === "/__sandbox/people" ? peopleControl(deps.store, method, value) : clockControl(deps.store, method, value),
    );
    return;
  }
  if (path === "/__sandbox/requests" || path.startsWith("/__sandbox/")) {
    await drain(req);
    send(req, res, control(deps, method, path));
    return;
  }
  if (path.startsWith("/track/") && (method === "GET" || method === "HEAD")) {
    await drain(req);
    send(req, res, publicTracking(deps.store, path.slice("/track/".length)));
    return;
  }
  if (path !== "/api" && !path.startsWith("/api/")) {
    await drain(req);
    send(req, res, { status: 404, body: { detail: `Not found: ${path}. The API is served under /api.` } });
    return;
  }

  const entry: RequestLogEntry = {
    method,
    path,
    query: queryRecord(url.searchParams),
    body: null,
    status: 0,
    at: new Date().toISOString(),
  };
  deps.log.add(entry);

  // the log keeps the query as sent; a quirk may change what the handler reads
  const quirkReq = { method, path, searchParams: url.searchParams };
  deps.quirks?.request(quirkReq);
  let response: ApiResponse;
  try {
    const body = await readAndDecode(req);
    entry.body = bodyForLog(body);
    response = await answer(deps, req, method, path, url.searchParams, body);
  } catch (err) {
    response = errorResponse(err);
  }
  // the Date header is the sandbox's own clock (a pinned or moved one too), as a service's is its own: `--state`
  // bounds its next look by it (src/state/README.md); the no-date quirk drops it
  res.sendDate = false;
  response = { ...response, headers: { Date: new Date(deps.store.nowMs()).toUTCString(), ...response.headers } };
  if (deps.quirks) response = deps.quirks.response(quirkReq, response);
  entry.status = response.status;

  if (method === "POST" && response.status >= 200 && response.status < 300 && deps.faults.shouldReset()) {
    // The change is applied; the client never learns it. This is the exactly-once test case.
    entry.reset = true;
    req.socket.destroy();
    return;
  }
  send(req, res, response);
}

async function readAndDecode(req: IncomingMessage): Promise<DecodedBody> {
  const raw = await readBody(req);
  return decodeBody(raw, req.headers["content-type"]);
}

async function answer(
  deps: ServerDeps,
  req: IncomingMessage,
  method: string,
  path: string,
  searchParams: URLSearchParams,
  body: DecodedBody,
): Promise<ApiResponse> {
  await deps.faults.delay();
  const retryAfter = deps.faults.rateLimit(req.headers.authorization ?? "(no key)", Date.now());
  if (retryAfter !== null) {
    const { rateLimitPerMin: limit, rateLimitWindowMs: windowMs } = deps.faults.settings;
    const per = windowMs === 60_000 ? "a minute" : `in ${windowMs / 1000} s`;
    throw new HttpError(429, `Rate limit exceeded: at most ${limit} requests ${per}. Retry in ${retryAfter} s.`, {
      "Retry-After": String(retryAfter),
    });
  }
  if (deps.faults.shouldFail())
    throw new HttpError(503, "Service temporarily unavailable (sandbox fail-rate fault). Retry later.");

  const match = matchRoute(API_ROUTES, path);
  if (!match) throw new HttpError(404, `Not found: no endpoint at ${method} ${path}.`);
  const allow = allowHeader(match.route);
  if (method === "OPTIONS") return { status: 204, body: null, headers: { Allow: allow } };
  const verb = method === "HEAD" ? "GET" : method;
  const handler = verb === "GET" || verb === "POST" ? match.route.methods[verb] : undefined;
  if (!handler)
    throw new HttpError(405, `Method "${method}" not allowed on ${path}. Allowed: ${allow}.`, { Allow: allow });

  const user = authenticate(req.headers.authorization);
  const ctx: RequestContext = {
    method,
    path,
    params: match.params,
    searchParams,
    query: new Query(searchParams),
    body,
    user,
    store: deps.store,
    cursors: deps.cursors,
  };
  return handler(ctx);
}

function errorResponse(err: unknown): ApiResponse {
  if (err instanceof HttpError) return { status: err.status, body: { detail: err.detail }, headers: err.headers };
  // A bug in the sandbox: answer 500 (and say so on stderr) rather than crash.
  process.stderr.write(`sandbox: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return { status: 500, body: { detail: "Internal sandbox error." } };
}

/** /__sandbox/requests: the request log (GET) and clearing it (DELETE). No key needed. */
function control(deps: ServerDeps, method: string, path: string): ApiResponse {
  if (path !== "/__sandbox/requests") return { status: 404, body: { detail: `Not found: ${path}.` } };
  if (method === "GET" || method === "HEAD") return { status: 200, body: deps.log.list() };
  if (method === "DELETE") {
    deps.log.clear();
    return { status: 204, body: null };
  }
  return {
    status: 405,
    body: { detail: `Method "${method}" not allowed on ${path}.` },
    headers: { Allow: "GET, HEAD, DELETE" },
  };
}

function send(req: IncomingMessage, res: ServerResponse, response: ApiResponse): void {
  if (res.destroyed || res.writableEnded) return;
  const noBody = response.rawBody === undefined && (response.status === 204 || response.body === null);
  const payload = response.rawBody ?? (noBody ? "" : JSON.stringify(response.body));
  res.statusCode = response.status;
  for (const [k, v] of Object.entries(response.headers ?? {})) res.setHeader(k, v);
  if (!noBody) res.setHeader("Content-Type", response.contentType ?? "application/json");
  res.setHeader("Content-Length", Buffer.byteLength(payload));
  res.end(req.method === "HEAD" ? undefined : payload);
}

/** Reads and drops a body we do not use, so keep-alive connections stay in sync. */
async function drain(req: IncomingMessage): Promise<void> {
  try {
    await readBody(req);
  } catch {
    // oversized or broken: irrelevant for these paths
  }
}

/**
 * Quirks: answers a real service gives within what the spec allows (or leaves open), which the faithful sandbox
 * never gives by default. Each is one small function over a request's query or an answer, so users can rehearse
 * their rules against a service that answers like theirs (`flowrules sandbox --quirks a,b`), and tests can run plan
 * and apply under each. The list is documented in README.md ("Real services").
 */
import type { ApiResponse } from "./context.js";

export interface QuirkRequest {
  method: string;
  /** path as received, e.g. /api/processes/1042/steps/20111/actions/50222/ */
  path: string;
  /** the query; request quirks may change it before the handler reads it */
  searchParams: URLSearchParams;
}

interface Quirk {
  name: string;
  /** one line for `--help` and README.md */
  description: string;
  /** quirks whose effect needs listings of several pages turn on small-pages too */
  needsSmallPages?: boolean;
  request?: (req: QuirkRequest) => void;
  response?: (req: QuirkRequest, res: ApiResponse) => ApiResponse;
}

/** The page sizes small-pages clamps to: a form-field listing of one instance page then spans several pages. */
export const SMALL_PAGE_SIZE = 50;
export const SMALL_FIELD_LIMIT = 20;
/** The host a Django service behind a proxy without forwarded-host settings writes into its links. */
export const INTERNAL_ORIGIN = "http://backend.internal:8000";

const INSTANCE_LIST_RE = /^\/api\/v2\/processes\/\d+\/instances\/?$/;
const FIELD_VALUES_RE = /^\/api\/processes\/\d+\/steps\/\d+\/actions\/\d+\/?$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function clampParam(params: URLSearchParams, name: string, max: number): void {
  const raw = params.get(name);
  const n = raw === null ? Number.POSITIVE_INFINITY : Number(raw);
  // a value the service would refuse (not a positive integer) is left for the handler to refuse
  if (raw !== null && !(Number.isInteger(n) && n >= 1)) return;
  if (n > max) params.set(name, String(max));
}

/** Applies `fix` to every input object of the answer with the field's type: snapshot actions and form-field records. */
function mapInputObjects(body: unknown, fix: (inputObject: unknown, type: unknown) => unknown): unknown {
  if (!isRecord(body)) return body;
  const snapshot = body.process_snapshot;
  if (isRecord(snapshot) && Array.isArray(snapshot.steps)) {
    for (const step of snapshot.steps) {
      if (!isRecord(step) || !Array.isArray(step.actions)) continue;
      for (const action of step.actions) {
        if (isRecord(action) && "input_object" in action) action.input_object = fix(action.input_object, action.type);
      }
    }
  }
  if (Array.isArray(body.results)) {
    for (const r of body.results) {
      if (isRecord(r) && "value" in r && isRecord(r.settings)) r.value = fix(r.value, r.settings.type);
    }
  }
  return body;
}

/** 12.5 → "12.50", as Django REST framework's DecimalField(decimal_places=2) writes it; other numbers as text. */
function decimalText(n: number): string {
  return Number.isInteger(Math.round(n * 100)) && Math.abs(n * 100 - Math.round(n * 100)) < 1e-9
    ? n.toFixed(2)
    : String(n);
}

const ISO_Z_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,3}))?Z$/;

/** "2024-05-01T10:00:00.123Z" → "2024-05-01T10:00:00.123000+00:00" (Python's isoformat of an aware datetime). */
function offsetMicros(v: unknown): unknown {
  if (typeof v === "string") {
    const m = ISO_Z_RE.exec(v);
    return m ? `${m[1]}.${(m[2] ?? "").padEnd(3, "0")}000+00:00` : v;
  }
  if (Array.isArray(v)) return v.map(offsetMicros);
  if (isRecord(v)) {
    for (const [k, x] of Object.entries(v)) v[k] = offsetMicros(x);
    return v;
  }
  return v;
}

function rewriteLinks(res: ApiResponse, rewrite: (link: string) => string): ApiResponse {
  if (!isRecord(res.body)) return res;
  for (const key of ["next", "previous"]) {
    const link = res.body[key];
    if (typeof link === "string") res.body[key] = rewrite(link);
  }
  return res;
}

function replaceOrigin(link: string, origin: string): string {
  try {
    const url = new URL(link);
    return `${origin}${url.pathname}${url.search}`;
  } catch {
    return link;
  }
}

/** The position an endless-cursor request asked for (its counter), for the answer's next link. */
const endlessAt = new WeakMap<QuirkRequest, number>();
const ENDLESS_PREFIX = "endless.";

/**
 * endless-cursor's next link: a cursor never given before (its counter is one more than the request's) wrapping the
 * query the faithful next link carried — or, after the last page, the first page's query, so the listing starts over.
 */
function endlessNext(req: QuirkRequest, res: ApiResponse): ApiResponse {
  if (!INSTANCE_LIST_RE.test(req.path) || res.status !== 200 || !isRecord(res.body)) return res;
  const { count: _dropped, ...body } = res.body;
  let inner: URLSearchParams;
  let origin = "";
  if (typeof body.next === "string") {
    const url = new URL(body.next, "http://sandbox.invalid");
    inner = url.searchParams;
    if (url.origin !== "http://sandbox.invalid") origin = url.origin;
  } else {
    inner = new URLSearchParams(req.searchParams);
    inner.delete("cursor");
  }
  const n = (endlessAt.get(req) ?? 0) + 1;
  const cursor = `${ENDLESS_PREFIX}${n}.${Buffer.from(inner.toString()).toString("base64url")}`;
  return { ...res, body: { ...body, next: `${origin}${req.path}?${new URLSearchParams({ cursor }).toString()}` } };
}

/** endless-cursor's request: unwraps the cursor into the query the faithful sandbox understands. */
function endlessRequest(req: QuirkRequest): void {
  if (!INSTANCE_LIST_RE.test(req.path)) return;
  const cursor = req.searchParams.get("cursor");
  if (cursor === null || !cursor.startsWith(ENDLESS_PREFIX)) return;
  const [n, wrapped] = cursor.slice(ENDLESS_PREFIX.length).split(".");
  const inner = new URLSearchParams(Buffer.from(wrapped ?? "", "base64url").toString());
  for (const key of [...req.searchParams.keys()]) req.searchParams.delete(key);
  for (const [k, v] of inner) req.searchParams.append(k, v);
  endlessAt.set(req, Number(n) || 0);
}

const QUIRKS: readonly Quirk[] = [
  {
    name: "decimal-strings",
    description: 'number values as decimal strings ({"inputValue": "12.50"}), as DRF\'s DecimalField answers',
    response: (_req, res) => ({
      ...res,
      body: mapInputObjects(res.body, (io, type) =>
        type === "number" && isRecord(io) && typeof io.inputValue === "number"
          ? { ...io, inputValue: decimalText(io.inputValue) }
          : io,
      ),
    }),
  },
  {
    name: "offset-micros",
    description: "date-times with microseconds and +00:00 instead of Z (2024-05-01T10:00:00.123000+00:00)",
    response: (_req, res) => ({ ...res, body: offsetMicros(res.body) }),
  },
  {
    name: "radio-plain",
    description: 'radio values as plain strings ({"inputValue": "Approved"}) instead of {"radioItemSelected": …}',
    response: (_req, res) => ({
      ...res,
      body: mapInputObjects(res.body, (io, type) =>
        type === "radio" &&
        isRecord(io) &&
        isRecord(io.inputValue) &&
        typeof io.inputValue.radioItemSelected === "string"
          ? { ...io, inputValue: io.inputValue.radioItemSelected }
          : io,
      ),
    }),
  },
  {
    name: "next-host",
    description: `next/previous links name the service's internal host (${INTERNAL_ORIGIN}/api/…); implies small-pages`,
    needsSmallPages: true,
    response: (_req, res) => rewriteLinks(res, (link) => replaceOrigin(link, INTERNAL_ORIGIN)),
  },
  {
    name: "https-next",
    description: "next/previous links say https:// although the client used http://; implies small-pages",
    needsSmallPages: true,
    response: (_req, res) => rewriteLinks(res, (link) => link.replace(/^http:\/\//, "https://")),
  },
  {
    name: "localhost-next",
    description: "next/previous links say localhost where the client used 127.0.0.1; implies small-pages",
    needsSmallPages: true,
    response: (_req, res) =>
      rewriteLinks(res, (link) => link.replace(/^(https?:\/\/)127\.0\.0\.1(?=[:/])/, "$1localhost")),
  },
  {
    name: "no-count",
    description: "instance list (cursor) pages carry no count, as DRF's CursorPagination; implies small-pages",
    needsSmallPages: true,
    response: (req, res) => {
      if (INSTANCE_LIST_RE.test(req.path) && res.status === 200 && isRecord(res.body)) {
        const { count: _dropped, ...rest } = res.body;
        return { ...res, body: rest };
      }
      return res;
    },
  },
  {
    name: "gateway-404-page2",
    description: "page 2 of every form-field listing is answered by a gateway's HTML 404; implies small-pages",
    needsSmallPages: true,
    response: (req, res) =>
      FIELD_VALUES_RE.test(req.path) && req.method === "GET" && req.searchParams.get("page") === "2"
        ? {
            status: 404,
            body: null,
            contentType: "text/html; charset=utf-8",
            rawBody:
              "<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>",
          }
        : res,
  },
  {
    name: "no-date",
    description:
      "answers carry no Date header (a proxy that drops it): --state then bounds its next look by its own clock, less two minutes",
    response: (_req, res) => {
      if (!res.headers || !("Date" in res.headers)) return res;
      const { Date: _dropped, ...headers } = res.headers;
      return { ...res, headers };
    },
  },
  {
    name: "repeat-items",
    description:
      "every instance list page lists each of its items twice, as offset pages shifting under concurrent inserts repeat them; implies small-pages",
    needsSmallPages: true,
    response: (req, res) => {
      if (
        INSTANCE_LIST_RE.test(req.path) &&
        res.status === 200 &&
        isRecord(res.body) &&
        Array.isArray(res.body.results)
      ) {
        return { ...res, body: { ...res.body, results: res.body.results.flatMap((item: unknown) => [item, item]) } };
      }
      return res;
    },
  },
  {
    name: "endless-cursor",
    description:
      "instance list pages carry no count and never end: every next link is a cursor never given before, and after the last page the listing starts over; implies small-pages",
    needsSmallPages: true,
    request: endlessRequest,
    response: endlessNext,
  },
  {
    name: "small-pages",
    description: `at most ${SMALL_PAGE_SIZE} instances a list page and ${SMALL_FIELD_LIMIT} values a form-field page, whatever is asked`,
    request: (req) => {
      if (INSTANCE_LIST_RE.test(req.path)) clampParam(req.searchParams, "page_size", SMALL_PAGE_SIZE);
      if (FIELD_VALUES_RE.test(req.path)) clampParam(req.searchParams, "limit", SMALL_FIELD_LIMIT);
    },
  },
];

export const QUIRK_NAMES: readonly string[] = QUIRKS.map((q) => q.name);

/** Name and one-line description of every quirk, in order. */
export function quirkList(): Array<{ name: string; description: string }> {
  return QUIRKS.map(({ name, description }) => ({ name, description }));
}

/** "a,b" or ["a", "b"] → the quirk names; RangeError naming an unknown one and the known ones. */
export function parseQuirks(input: string | readonly string[]): string[] {
  const names = (typeof input === "string" ? input.split(",") : input).map((s) => s.trim()).filter((s) => s !== "");
  for (const n of names) {
    if (!QUIRK_NAMES.includes(n)) throw new RangeError(`unknown quirk "${n}"; known: ${QUIRK_NAMES.join(", ")}`);
  }
  return [...new Set(names)];
}

/** The quirks in effect: the named ones, plus small-pages when one of them needs it. Pure and reusable per request. */
export class Quirks {
  private readonly active: readonly Quirk[];

  constructor(names: readonly string[] = []) {
    const chosen = new Set(parseQuirks(names));
    if (QUIRKS.some((q) => chosen.has(q.name) && q.needsSmallPages)) chosen.add("small-pages");
    this.active = QUIRKS.filter((q) => chosen.has(q.name));
  }

  get names(): string[] {
    return this.active.map((q) => q.name);
  }

  /** Before routing: may change the query the handler reads (and the links it writes). */
  request(req: QuirkRequest): void {
    for (const q of this.active) q.request?.(req);
  }

  /** After the handler: the answer as this service would give it. */
  response(req: QuirkRequest, res: ApiResponse): ApiResponse {
    let out = res;
    for (const q of this.active) if (q.response) out = q.response(req, out);
    return out;
  }
}

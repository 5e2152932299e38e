/** Types shared by the server and the endpoint handlers. */
import type { CatalogUser } from "./catalog.js";
import type { DecodedBody } from "./body.js";
import type { CursorCodec } from "./cursor.js";
import type { Query } from "./query.js";
import type { SandboxStore } from "./store.js";

/** The media type the spec states for 4.2 and 4.5. */
export const V1_JSON = "application/json; version=v1";

export interface RequestContext {
  method: string;
  /** full path as received, e.g. /api/instances/100001/ */
  path: string;
  /** path parameters captured by the route, in order */
  params: string[];
  searchParams: URLSearchParams;
  query: Query;
  body: DecodedBody;
  user: CatalogUser;
  store: SandboxStore;
  cursors: CursorCodec;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  /** default application/json */
  contentType?: string;
  /** sent as is instead of JSON of `body` (a gateway's HTML page) */
  rawBody?: string;
  headers?: Record<string, string>;
}

export type Handler = (ctx: RequestContext) => ApiResponse | Promise<ApiResponse>;

/** Absolute URL of the same path with changed query parameters (null value = remove it), for next/previous links. */
export function linkWith(ctx: RequestContext, changes: Record<string, string | null>): string {
  const params = new URLSearchParams(ctx.searchParams);
  for (const [k, v] of Object.entries(changes)) {
    params.delete(k);
    if (v !== null) params.append(k, v);
  }
  const search = params.toString();
  return `${ctx.store.urls.origin}${ctx.path}${search ? `?${search}` : ""}`;
}

export const isTrue = (v: string | undefined): boolean => v !== undefined && ["true", "1"].includes(v.toLowerCase());

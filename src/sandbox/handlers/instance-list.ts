/**
 * 4.2 GET /v2/processes/{process_id}/instances/ — filters, ordering, keyset cursor pagination.
 * page_size: default 100; above 500 it is clamped to 500; below 1 (or not an integer) is a 400.
 * A cursor is bound to its workflow and ordering: using it with another is a 400.
 */
import { instanceVisibility } from "../access.js";
import { V1_JSON, linkWith, type ApiResponse, type RequestContext } from "../context.js";
import type { CursorPayload } from "../cursor.js";
import { badRequest } from "../errors.js";
import { parseFilters } from "../filters.js";
import { lowerBound, orderingKey, parseOrdering, type OrderField, type SortKey, type SortedView } from "../ordering.js";
import { listElement } from "../serialize.js";
import type { InstanceState } from "../state.js";
import { visibleWorkflow } from "./lookup-visible.js";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;

export function pageSizeParam(ctx: RequestContext, name: string): number {
  const n = ctx.query.int(name, { min: 1 });
  return n === undefined ? DEFAULT_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE);
}

export function listInstances(ctx: RequestContext): ApiResponse {
  const workflow = visibleWorkflow(ctx, ctx.params[0]);
  const pageSize = pageSizeParam(ctx, "page_size");
  const order = parseOrdering(ctx.searchParams.getAll("ordering"));
  const oKey = orderingKey(order);
  const rawCursor = ctx.query.one("cursor");
  const cursor = rawCursor === undefined ? undefined : ctx.cursors.decode(rawCursor);
  if (cursor && (cursor.p !== workflow.id || cursor.o !== oKey)) {
    throw badRequest("Invalid cursor: it belongs to another workflow or ordering; start again without cursor.");
  }
  const asOf = cursor?.t ?? ctx.store.nowMs();
  const filter = parseFilters(ctx.query, { extended: false, asOf });
  const visible = instanceVisibility(ctx.user, workflow);
  const match = (i: InstanceState): boolean => visible(i) && filter(i);

  const view = ctx.store.sorted(workflow.id, order, asOf);
  // One pass: positions (in the sorted view) of every matching instance; count and page both come from it.
  const matches: number[] = [];
  for (let i = 0; i < view.items.length; i++) if (match(view.items[i] as InstanceState)) matches.push(i);
  const count = matches.length;
  const page = cursor ? pageAt(view, order, matches, cursor, pageSize) : firstPage(matches, pageSize);
  const make = (index: number, r: boolean): string => {
    const payload: CursorPayload = { v: 1, p: workflow.id, o: oKey, t: asOf, k: view.keys[index] as SortKey, r };
    return linkWith(ctx, { cursor: ctx.cursors.encode(payload) });
  };
  const first = page.indices[0];
  const last = page.indices[page.indices.length - 1];
  let next: string | null = null;
  let previous: string | null = null;
  if (page.hasNext && last !== undefined) next = make(last, false);
  if (page.hasPrevious) {
    if (first !== undefined) previous = make(first, true);
    else if (cursor) previous = linkWith(ctx, { cursor: ctx.cursors.encode({ ...cursor, r: true }) });
  }
  if (page.hasNext && last === undefined && cursor)
    next = linkWith(ctx, { cursor: ctx.cursors.encode({ ...cursor, r: false }) });

  return {
    status: 200,
    contentType: V1_JSON,
    body: {
      count,
      next,
      previous,
      results: page.indices.map((i) => listElement(view.items[i] as InstanceState, ctx.store.urls)),
    },
  };
}

interface Page {
  /** positions in the sorted view */
  indices: number[];
  hasNext: boolean;
  hasPrevious: boolean;
}

function firstPage(matches: number[], size: number): Page {
  return { indices: matches.slice(0, size), hasNext: matches.length > size, hasPrevious: false };
}

/** The page after the cursor's position, or (for a "previous" cursor) the page ending just before it. */
function pageAt(view: SortedView, order: OrderField[], matches: number[], cursor: CursorPayload, size: number): Page {
  const position = lowerBound(view, cursor.k, order, cursor.r);
  const j = firstAtOrAfter(matches, position);
  if (!cursor.r) {
    return { indices: matches.slice(j, j + size), hasNext: j + size < matches.length, hasPrevious: j > 0 };
  }
  const from = Math.max(0, j - size);
  return { indices: matches.slice(from, j), hasNext: j < matches.length, hasPrevious: from > 0 };
}

/** Index of the first element of the ascending `sorted` that is >= value. */
function firstAtOrAfter(sorted: number[], value: number): number {
  let lo = 0,
    hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

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
  let count = 0;
  for (const inst of view.items) if (match(inst)) count++;

  const page = cursor?.r ? pageBefore(view, order, cursor.k, pageSize, match) : pageAfter(view, order, cursor?.k, pageSize, match);
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
  if (page.hasNext && last === undefined && cursor) next = linkWith(ctx, { cursor: ctx.cursors.encode({ ...cursor, r: false }) });

  return {
    status: 200,
    contentType: V1_JSON,
    body: { count, next, previous, results: page.indices.map((i) => listElement(view.items[i] as InstanceState, ctx.store.urls)) },
  };
}

interface Page {
  indices: number[];
  hasNext: boolean;
  hasPrevious: boolean;
}

type Match = (i: InstanceState) => boolean;

/** The page after a position (or the first page). */
function pageAfter(view: SortedView, order: OrderField[], key: SortKey | undefined, size: number, match: Match): Page {
  const start = key ? lowerBound(view, key, order, false) : 0;
  const indices: number[] = [];
  let i = start;
  for (; i < view.items.length && indices.length < size; i++) if (match(view.items[i] as InstanceState)) indices.push(i);
  return { indices, hasNext: anyMatch(view, i, view.items.length, match), hasPrevious: anyMatchBackward(view, start - 1, match) };
}

/** The page ending just before a position (a "previous" link). */
function pageBefore(view: SortedView, order: OrderField[], key: SortKey, size: number, match: Match): Page {
  const end = lowerBound(view, key, order, true);
  const indices: number[] = [];
  let i = end - 1;
  for (; i >= 0 && indices.length < size; i--) if (match(view.items[i] as InstanceState)) indices.push(i);
  indices.reverse();
  return { indices, hasNext: anyMatch(view, end, view.items.length, match), hasPrevious: anyMatchBackward(view, i, match) };
}

function anyMatch(view: SortedView, from: number, to: number, match: Match): boolean {
  for (let i = from; i < to; i++) if (match(view.items[i] as InstanceState)) return true;
  return false;
}

function anyMatchBackward(view: SortedView, from: number, match: Match): boolean {
  for (let i = from; i >= 0; i--) if (match(view.items[i] as InstanceState)) return true;
  return false;
}

/**
 * The two pagination styles of the service as async generators of pages. A listing either ends where the service
 * says it ends, or fails naming the listing: it never ends early and silently (a later page answered by a gateway's
 * 404 must not read as "no more instances", or a rule testing that a value is absent would overwrite data).
 */
import { ResponseShapeError } from "./errors.js";
import { plural } from "../text/plural.js";

/** One page of a listing (the pagination envelope). */
export interface Page<T> {
  /** null when the service sends none (DRF's cursor pagination) */
  count: number | null;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** What a page fetch asks, in words, for messages: "listing instances of workflow 1042, page 3". */
export type PageWords = (page: number) => string;

/**
 * What one listing may take, whatever its count says: a server whose pages never end (fresh cursors for ever, a
 * count that grows with every page) is stopped here with one error, not followed until memory or patience runs out.
 * Ten times the largest listing the performance targets name (docs/performance.md), and pages for it at 50 a page.
 */
export const MAX_LISTING_ITEMS = 1_000_000;
export const MAX_LISTING_PAGES = 20_000;

/** The caps of one listing (tests lower them to reach them in a few pages). */
export interface ListingLimits {
  maxPages: number;
  maxItems: number;
}

export const DEFAULT_LISTING_LIMITS: ListingLimits = { maxPages: MAX_LISTING_PAGES, maxItems: MAX_LISTING_ITEMS };

/** The one-line problem of a listing past a cap, naming what the server did. */
function capProblem(limits: ListingLimits, pages: number, items: number, count: number | null): string | undefined {
  const of = count === null ? "without a count" : `for a count of ${count}`;
  if (items > limits.maxItems) {
    return `the service's pages do not end: ${plural(items, "item")} in ${plural(pages, "page")} ${of}, more than the ${limits.maxItems} a listing may hold`;
  }
  if (pages >= limits.maxPages) {
    return `the service's pages do not end: ${plural(pages, "page")} fetched ${of} and the last one still has a next link (a listing may take ${limits.maxPages})`;
  }
  return undefined;
}

/** The cursor a page path carries (`?cursor=…`), if any. */
function cursorOf(path: string): string | null {
  const q = path.indexOf("?");
  return q < 0 ? null : new URLSearchParams(path.slice(q + 1)).get("cursor");
}

function shapeError(path: string, asked: string, problem: string): ResponseShapeError {
  return new ResponseShapeError({ method: "GET", path, status: 200, what: "a page", problem, asked });
}

/** The listing's pages added up to fewer results than its count: pages went missing. */
function shortfall(read: number, count: number, pages: number): string {
  return `the listing ended after ${plural(pages, "page")} with ${read} of the ${count} results its count announced`;
}

/**
 * Cursor pagination (4.2): fetch the first path, then follow each page's `next` (resolved to a path under the base
 * URL by `resolveNext`, which throws for links that leave it) until it is null. A link seen twice is a server loop.
 * `count` may be missing; when present, the pages must add up to it.
 */
export async function* cursorPages<T>(
  firstPath: string,
  fetchPage: (path: string, page: number) => Promise<Page<T>>,
  resolveNext: (next: string, from: string, page: number) => string,
  words: PageWords = (n) => `a listing, page ${n}`,
  limits: ListingLimits = DEFAULT_LISTING_LIMITS,
): AsyncGenerator<Page<T>> {
  const seen = new Set<string>();
  // a cursor sent back again under another link (a parameter added or reordered) is the same loop
  const cursors = new Set<string>();
  let path: string | null = firstPath;
  let bound: number | undefined;
  let read = 0;
  while (path !== null) {
    const n = seen.size + 1;
    if (seen.has(path))
      throw shapeError(path, words(n), "pagination loop: the next link points to a page already fetched");
    const cursor = cursorOf(path);
    if (cursor !== null && cursors.has(cursor))
      throw shapeError(
        path,
        words(n),
        "pagination loop: the service sent back a cursor it had already given, under another link",
      );
    seen.add(path);
    if (cursor !== null) cursors.add(cursor);
    const page: Page<T> = await fetchPage(path, n);
    bound ??= pageBound(page);
    read += page.results.length;
    if (page.next !== null) {
      const capped = capProblem(limits, seen.size, read, page.count);
      if (capped !== undefined) throw shapeError(path, words(n), capped);
    }
    if (page.next !== null && seen.size >= bound)
      throw shapeError(path, words(n), endlessProblem(seen.size, page.count));
    // the last page's count is the freshest: a set that shrank meanwhile is not a shortfall
    if (page.next === null && page.count !== null && read < page.count)
      throw shapeError(path, words(n), shortfall(read, page.count, n));
    yield page;
    path = page.next === null ? null : resolveNext(page.next, path, n);
  }
}

/**
 * How many pages a listing may take, from its first page: twice what its count needs, and 10 more for a set that
 * grows meanwhile. A server that keeps answering `next` beyond that (fresh cursors, every page number) would
 * otherwise be followed forever.
 */
function pageBound(first: Page<unknown>): number {
  if (first.count === null) return Number.POSITIVE_INFINITY;
  return 2 * Math.ceil(first.count / Math.max(1, first.results.length)) + 10;
}

function endlessProblem(pages: number, count: number | null): string {
  const of = count === null ? "without a count" : `for a count of ${count}`;
  return `pagination does not end: ${plural(pages, "page")} fetched ${of}, and the last one still has a next link`;
}

/**
 * A page-number fetch: the page, or `"invalid-page"` when the service answered its own 404 `{"detail": "Invalid
 * page."}` (the result set shrank between requests). Any other failure is thrown.
 */
export type NumberedFetch<T> = (page: number) => Promise<Page<T> | "invalid-page">;

/**
 * Page-number pagination (4.6). Page 1 tells the total; the later pages are then fetched concurrently — at most
 * `window` ahead of the consumer, to bound memory — and yielded strictly in page order. An "Invalid page." ends the
 * listing only when the pages read already hold the count (the set shrank meanwhile); a last page that still has
 * `next` (it grew) is followed. Without a count, pages are followed one by one until `next` is null.
 */
export async function* numberedPages<T>(
  fetchPage: NumberedFetch<T>,
  window: number,
  /** the listing's path, for the error object */
  path = "a page-numbered listing",
  words: PageWords = (n) => `a page-numbered listing, page ${n}`,
  limits: ListingLimits = DEFAULT_LISTING_LIMITS,
): AsyncGenerator<Page<T>> {
  const first = await fetchPage(1);
  if (first === "invalid-page") throw shapeError(path, words(1), 'page 1 answered "Invalid page."');
  let read = first.results.length;
  let count = first.count;
  const ended = (n: number, page: Page<T>): void => {
    if (page.count !== null && read < page.count) throw shapeError(path, words(n), shortfall(read, page.count, n));
  };
  if (first.next === null || first.results.length === 0) {
    ended(1, first);
    yield first;
    return;
  }
  // the server may clamp the requested limit: the size of page 1 is the real page size
  const pageSize = first.results.length;
  const lastPage = count === null ? 1 : Math.max(1, Math.ceil(count / pageSize));
  const pending: Array<Promise<Page<T> | "invalid-page">> = [];
  let nextToStart = 2;
  const start = (): void => {
    const p = fetchPage(nextToStart++);
    p.catch(() => undefined); // observed when awaited; avoids unhandled rejections if the consumer stops early
    pending.push(p);
  };
  while (nextToStart <= lastPage && pending.length < Math.max(1, window)) start();
  // no count: nothing tells how many pages there are, so the next one is asked for only when a page says so
  if (count === null) start();
  yield first;
  const bound = pageBound(first);
  let n = 1;
  while (pending.length > 0) {
    const page = await pending.shift();
    n++;
    if (page === undefined) break;
    if (page === "invalid-page") {
      // the service's own "past the end": fine when what was read already holds the (latest) count
      if (count !== null && read >= count) return;
      throw shapeError(
        path,
        words(n),
        count === null
          ? 'the service answered "Invalid page." although the previous page had a next link'
          : `the service answered "Invalid page." after ${read} of the ${count} results its count announced`,
      );
    }
    read += page.results.length;
    if (page.count !== null) count = page.count;
    if (page.next !== null || nextToStart <= lastPage) {
      const capped = capProblem(limits, n, read, page.count);
      if (capped !== undefined) throw shapeError(path, words(n), capped);
    }
    if (nextToStart <= lastPage) start();
    else if (pending.length === 0 && page.next !== null && page.results.length > 0) {
      if (nextToStart > bound) throw shapeError(path, words(n), endlessProblem(nextToStart - 1, first.count));
      start();
    }
    if (pending.length === 0 && (page.next === null || page.results.length === 0)) ended(n, page);
    yield page;
  }
}

/** The two pagination styles of the service as async generators of pages. */
import { ResponseShapeError } from "./errors.js";

/** One page of a listing (the pagination envelope). */
export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/**
 * Cursor pagination (4.2): fetch the first path, then follow each page's `next` (resolved to a path under the base
 * URL by `resolveNext`, which throws for links that leave it) until it is null. A link seen twice is a server loop.
 */
export async function* cursorPages<T>(
  firstPath: string,
  fetchPage: (path: string) => Promise<Page<T>>,
  resolveNext: (next: string, from: string) => string,
): AsyncGenerator<Page<T>> {
  const seen = new Set<string>();
  let path: string | null = firstPath;
  let bound: number | undefined;
  while (path !== null) {
    if (seen.has(path)) {
      throw new ResponseShapeError({ method: "GET", path, status: 200, what: "a page", problem: "pagination loop: the next link points to a page already fetched" });
    }
    seen.add(path);
    const page: Page<T> = await fetchPage(path);
    bound ??= pageBound(page);
    if (page.next !== null && seen.size >= bound) {
      throw new ResponseShapeError({ method: "GET", path, status: 200, what: "a page", problem: endlessProblem(seen.size, page.count) });
    }
    yield page;
    path = page.next === null ? null : resolveNext(page.next, path);
  }
}

/**
 * How many pages a listing may take, from its first page: twice what its count needs, and 10 more for a set that
 * grows meanwhile. A server that keeps answering `next` beyond that (fresh cursors, every page number) would
 * otherwise be followed forever.
 */
function pageBound(first: Page<unknown>): number {
  return 2 * Math.ceil(first.count / Math.max(1, first.results.length)) + 10;
}

function endlessProblem(pages: number, count: number): string {
  return `pagination does not end: ${pages} pages fetched for a count of ${count}, and the last one still has a next link`;
}

/**
 * Page-number pagination (4.6). Page 1 tells the total; the later pages are then fetched concurrently — at most
 * `window` ahead of the consumer, to bound memory — and yielded strictly in page order. `fetchPage` resolves null for
 * a page past the end (the result set shrank meanwhile); a last page that still has `next` (it grew) is followed.
 */
export async function* numberedPages<T>(
  fetchPage: (page: number) => Promise<Page<T> | null>,
  window: number,
  /** the listing's path, for messages */
  path = "a page-numbered listing",
): AsyncGenerator<Page<T>> {
  const first = await fetchPage(1);
  if (first === null) return;
  if (first.next === null || first.results.length === 0) {
    yield first;
    return;
  }
  // the server may clamp the requested limit: the size of page 1 is the real page size
  const pageSize = first.results.length;
  const lastPage = Math.max(1, Math.ceil(first.count / pageSize));
  const pending: Array<Promise<Page<T> | null>> = [];
  let nextToStart = 2;
  const start = (): void => {
    const p = fetchPage(nextToStart++);
    p.catch(() => undefined); // observed when awaited; avoids unhandled rejections if the consumer stops early
    pending.push(p);
  };
  while (nextToStart <= lastPage && pending.length < Math.max(1, window)) start();
  yield first;
  const bound = pageBound(first);
  while (pending.length > 0) {
    const page = await pending.shift();
    if (page === null || page === undefined) return;
    if (nextToStart <= lastPage) start();
    else if (pending.length === 0 && page.next !== null && page.results.length > 0) {
      if (nextToStart > bound) throw new ResponseShapeError({ method: "GET", path, status: 200, what: "a page", problem: endlessProblem(nextToStart - 1, first.count) });
      start();
    }
    yield page;
  }
}

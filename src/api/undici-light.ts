/**
 * The two pieces of undici flowrules uses — a connection Pool and its `request` — loaded on their own. undici's
 * entry module loads everything it offers (fetch, WebSocket, caches, mocks, proxies): 5.4 MB of heap and 22 MB of
 * resident memory in every run, which V8's old-generation sizing multiplies (docs/performance.md, "Memory").
 *
 * These are undici's own CommonJS modules, which its entry re-exports; the lockfile pins the version, and the API
 * tests exercise both over loopback, so a layout change fails there, not in production. The types are undici's.
 */
import { createRequire } from "node:module";
import type { Dispatcher, Pool as UndiciPool } from "undici";

const load = createRequire(import.meta.url);

/** undici's Pool class (`import { Pool } from "undici"`). */
export const Pool = load("undici/lib/dispatcher/pool.js") as typeof UndiciPool;

const requestOn = load("undici/lib/api/api-request.js") as (
  this: Dispatcher,
  opts: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

/** `dispatcher.request(opts)`: undici adds `request` to the Dispatcher prototype only in its entry module. */
export function request(dispatcher: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return requestOn.call(dispatcher, opts);
}

/** Public surface of the API client. */
export * from "./client.js";
export * from "./errors.js";
export * from "./schemas.js";
export { ENDPOINTS } from "./stats.js";
export { serializeQuery } from "./query.js";
export { isLoopbackHost } from "./url-guard.js";
export * from "./connection.js";
export {
  LimiterStoppedError,
  RateLimiter,
  WINDOW_SHARE,
  windowBudget,
  type Grant,
  type LimiterWait,
  type RequestLimiter,
} from "./rate-limiter.js";
export { parseRateLimitHeaders, type RateLimitInfo } from "./rate-headers.js";
export { DelegatingClient } from "./delegating.js";

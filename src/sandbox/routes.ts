/** The API's routes: exact paths from the spec (note: /instances/bulk/abort has no trailing slash). */
import type { Handler } from "./context.js";
import { bulkAbort } from "./handlers/bulk-abort.js";
import { completeStep } from "./handlers/complete-step.js";
import { fieldValues } from "./handlers/field-values.js";
import { getInstance } from "./handlers/instance-get.js";
import { listInstances } from "./handlers/instance-list.js";
import { listProcesses } from "./handlers/processes.js";

export interface Route {
  pattern: RegExp;
  methods: Partial<Record<"GET" | "POST", Handler>>;
}

export const API_ROUTES: readonly Route[] = [
  { pattern: /^\/api\/processes\/$/, methods: { GET: listProcesses } },
  { pattern: /^\/api\/v2\/processes\/(\d+)\/instances\/$/, methods: { GET: listInstances } },
  { pattern: /^\/api\/instances\/(\d+)\/$/, methods: { GET: getInstance } },
  { pattern: /^\/api\/instances\/(\d+)\/complete_step\/$/, methods: { POST: completeStep } },
  { pattern: /^\/api\/instances\/bulk\/abort$/, methods: { POST: bulkAbort } },
  { pattern: /^\/api\/processes\/(\d+)\/steps\/(\d+)\/actions\/(\d+)\/$/, methods: { GET: fieldValues } },
];

export interface RouteMatch {
  route: Route;
  params: string[];
}

export function matchRoute(routes: readonly Route[], path: string): RouteMatch | undefined {
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (m) return { route, params: m.slice(1).map((p) => p ?? "") };
  }
  return undefined;
}

/** Value of the Allow header for a route: GET implies HEAD. */
export function allowHeader(route: Route): string {
  const methods: string[] = Object.keys(route.methods);
  if (methods.includes("GET")) methods.push("HEAD");
  methods.push("OPTIONS");
  return methods.join(", ");
}

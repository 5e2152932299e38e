/**
 * The public status-tracking page behind an instance's public_url ({origin}/track/<token>): no key needed, shows only
 * what a requester outside the company may see. Not part of the API (not under /api, not in the request log).
 */
import type { ApiResponse } from "./context.js";
import { workflowOf } from "./lookup.js";
import { statusOf } from "./state.js";
import type { SandboxStore } from "./store.js";

export function publicTracking(store: SandboxStore, token: string): ApiResponse {
  const inst = store.byPublicToken(token);
  if (!inst) return { status: 404, body: { detail: "Unknown tracking link." } };
  return {
    status: 200,
    body: { name: inst.name, workflow: workflowOf(inst.processId).name, status: statusOf(inst), stage: inst.stage },
  };
}

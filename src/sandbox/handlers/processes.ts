/** 4.1 GET /processes/ — the workflows the key may see, by id. */
import { WORKFLOWS } from "../catalog.js";
import { canSeeWorkflow } from "../access.js";
import type { ApiResponse, RequestContext } from "../context.js";
import { workflowRecord } from "../serialize.js";

export function listProcesses(ctx: RequestContext): ApiResponse {
  const visible = WORKFLOWS.filter((w) => canSeeWorkflow(ctx.user, w)).sort((a, b) => a.id - b.id);
  return { status: 200, body: visible.map((w) => workflowRecord(w, ctx.store.urls)) };
}

/** 4.3 GET /instances/{id}/ — the full record; inject_values=true / steps_time_frame=true enrich process_snapshot. */
import { isTrue, type ApiResponse, type RequestContext } from "../context.js";
import { instanceRecord } from "../serialize.js";
import { visibleInstance } from "./lookup-visible.js";

export function getInstance(ctx: RequestContext): ApiResponse {
  const inst = visibleInstance(ctx, ctx.params[0]);
  const record = instanceRecord(inst, ctx.store.urls, {
    injectValues: isTrue(ctx.query.one("inject_values")),
    stepsTimeFrame: isTrue(ctx.query.one("steps_time_frame")),
  });
  return { status: 200, body: record };
}

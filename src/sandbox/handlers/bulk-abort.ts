/**
 * 4.5 POST /instances/bulk/abort — body {ids: [int]} as JSON, urlencoded (`ids=1&ids=2` or `ids=1,2`) or multipart.
 * Aborts the running instances among them that the key may act on (administrator, or lead of the workflow); others
 * (unknown, invisible, not running, not permitted) are silently left out. Answers {ids} = the ids actually aborted,
 * in request order. At most 500 ids per request (400 beyond); duplicates count once.
 */
import { z } from "zod";
import { canAbort, canSeeInstance } from "../access.js";
import { V1_JSON, type ApiResponse, type RequestContext } from "../context.js";
import { badRequest } from "../errors.js";
import { workflowOf } from "../lookup.js";
import { parseIntStrict } from "../query.js";
import { describeIssues, malformed, unsupportedMedia } from "./body-errors.js";

export const MAX_BULK_IDS = 500;
const ACCEPTED = "application/json, application/x-www-form-urlencoded or multipart/form-data";
const jsonSchema = z.object({ ids: z.array(z.number().int()) });

export function bulkAbort(ctx: RequestContext): ApiResponse {
  const requested = [...new Set(requestedIds(ctx))];
  if (requested.length > MAX_BULK_IDS) {
    throw badRequest(`Too many ids: ${requested.length}; at most ${MAX_BULK_IDS} per request.`);
  }
  const aborted: number[] = [];
  for (const id of requested) {
    const inst = ctx.store.peek(id);
    if (!inst || !canSeeInstance(ctx.user, inst) || !canAbort(ctx.user, workflowOf(inst.processId))) continue;
    if (ctx.store.abort(id)) aborted.push(id);
  }
  return { status: 200, contentType: V1_JSON, body: { ids: aborted } };
}

function requestedIds(ctx: RequestContext): number[] {
  const body = ctx.body;
  switch (body.kind) {
    case "none":
      throw badRequest('Request body required: {"ids": [int, ...]}.');
    case "invalid":
      throw malformed(body);
    case "unsupported":
      throw unsupportedMedia(body.media, ACCEPTED);
    case "json": {
      const parsed = jsonSchema.safeParse(body.value);
      if (!parsed.success) throw badRequest(`Invalid body: ${describeIssues(parsed.error)}`);
      return parsed.data.ids;
    }
    case "form": {
      const values = body.fields.get("ids");
      if (!values) throw badRequest("ids is required (ids=1&ids=2 or ids=1,2).");
      return values
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter((v) => v !== "")
        .map((v) => parseIntStrict(v, "ids", {}));
    }
  }
}

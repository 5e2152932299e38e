/**
 * 4.6 GET /processes/{pid}/steps/{sid}/actions/{aid}/ — one form field's values across instances.
 * Lists only instances the key may see and where the field holds a value. Filters as 4.2 plus instance_ids, id and
 * progress; date filters as X_after / X_before. page/limit pagination: limit default 100, clamped to 500, < 1 is 400;
 * page must be an integer >= 1 (400 otherwise); a page past the last answers 404 {"detail": "Invalid page."}
 * (page 1 of an empty result is an empty 200).
 */
import { instanceVisibility } from "../access.js";
import { linkWith, type ApiResponse, type RequestContext } from "../context.js";
import { notFound } from "../errors.js";
import { parseFilters } from "../filters.js";
import { actionInStep, stepInWorkflow } from "../lookup.js";
import { parseOrdering } from "../ordering.js";
import { fieldSettings } from "../serialize.js";
import type { InstanceState } from "../state.js";
import { pageSizeParam } from "./instance-list.js";
import { visibleWorkflow } from "./lookup-visible.js";

export function fieldValues(ctx: RequestContext): ApiResponse {
  const [pid, sid, aid] = ctx.params;
  const workflow = visibleWorkflow(ctx, pid);
  const step = stepInWorkflow(workflow, Number(sid));
  if (!step) throw notFound(`Step ${sid} not found in workflow ${workflow.id}.`);
  const action = actionInStep(step, Number(aid));
  if (!action) throw notFound(`Action ${aid} not found in step ${step.id}.`);

  const limit = pageSizeParam(ctx, "limit");
  const page = ctx.query.int("page", { min: 1 }) ?? 1;
  const order = parseOrdering(ctx.searchParams.getAll("ordering"));
  const asOf = ctx.store.nowMs();
  const filter = parseFilters(ctx.query, { extended: true, asOf });
  const visible = instanceVisibility(ctx.user, workflow);

  const matches: InstanceState[] = [];
  for (const inst of ctx.store.sorted(workflow.id, order, asOf).items) {
    if (inst.values.has(action.id) && visible(inst) && filter(inst)) matches.push(inst);
  }
  const count = matches.length;
  const start = (page - 1) * limit;
  if (start >= count && page > 1) throw notFound("Invalid page.");
  const settings = fieldSettings(action, step.id);
  const results = matches.slice(start, start + limit).map((inst) => ({
    instance_id: inst.id,
    instance_name: inst.name,
    value: structuredClone(inst.values.get(action.id)),
    settings: structuredClone(settings),
  }));
  return {
    status: 200,
    body: {
      count,
      next: start + limit < count ? linkWith(ctx, { page: String(page + 1) }) : null,
      // like Django REST framework, the link to page 1 carries no page parameter
      previous: page > 1 ? linkWith(ctx, { page: page === 2 ? null : String(page - 1) }) : null,
      results,
    },
  };
}

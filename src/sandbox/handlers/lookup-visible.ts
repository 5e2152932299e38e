/** Path-parameter lookups that answer 404 both for unknown ids and for things the key may not see. */
import type { CatalogWorkflow } from "../catalog.js";
import { canSeeInstance, canSeeWorkflow } from "../access.js";
import type { RequestContext } from "../context.js";
import { notFound } from "../errors.js";
import { workflowById } from "../lookup.js";
import type { InstanceState } from "../state.js";

export function visibleWorkflow(ctx: RequestContext, raw: string | undefined): CatalogWorkflow {
  const id = Number(raw);
  const workflow = workflowById(id);
  if (!workflow || !canSeeWorkflow(ctx.user, workflow)) throw notFound(`Workflow ${raw} not found.`);
  return workflow;
}

export function visibleInstance(ctx: RequestContext, raw: string | undefined): Readonly<InstanceState> {
  const inst = ctx.store.peek(Number(raw));
  if (!inst || !canSeeInstance(ctx.user, inst)) throw notFound(`Instance ${raw} not found.`);
  return inst;
}

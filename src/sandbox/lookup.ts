/** Indexed views over the static catalogue (ids → objects), built once at module load. */
import {
  USERS,
  WORKFLOWS,
  type CatalogAction,
  type CatalogStep,
  type CatalogUser,
  type CatalogWorkflow,
} from "./catalog.js";

const workflowsById = new Map<number, CatalogWorkflow>(WORKFLOWS.map((w) => [w.id, w]));
const usersByKey = new Map<string, CatalogUser>(USERS.map((u) => [u.key, u]));

export function workflowById(id: number): CatalogWorkflow | undefined {
  return workflowsById.get(id);
}

/** Same as workflowById, for ids that come from the store (always valid): fails loudly on a broken invariant. */
export function workflowOf(processId: number): CatalogWorkflow {
  const w = workflowsById.get(processId);
  if (!w) throw new Error(`instance refers to unknown workflow ${processId}`);
  return w;
}

export function stepInWorkflow(workflow: CatalogWorkflow, stepId: number): CatalogStep | undefined {
  return workflow.steps.find((s) => s.id === stepId);
}

export function actionInStep(step: CatalogStep, actionId: number): CatalogAction | undefined {
  return step.actions.find((a) => a.id === actionId);
}

export function userByKey(key: string): CatalogUser | undefined {
  return usersByKey.get(key);
}

/** Steps in position order (the catalogue lists them that way, but do not rely on it). */
const orderedCache = new Map<number, readonly CatalogStep[]>();
export function orderedSteps(workflow: CatalogWorkflow): readonly CatalogStep[] {
  let steps = orderedCache.get(workflow.id);
  if (!steps) {
    steps = [...workflow.steps].sort((a, b) => a.position - b.position);
    orderedCache.set(workflow.id, steps);
  }
  return steps;
}

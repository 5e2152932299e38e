/**
 * Who sees and does what (docs/service.md, "Authentication"; docs/sandbox.md).
 * - administrator: every workflow and instance; may complete any step and abort any instance.
 * - workflow lead (user listed in `leads`): the workflow and all its instances; any of its steps; may abort.
 * - step owner: sees a workflow containing a step it owns; sees an instance by its visibility_mode — public: all;
 *   involved / involved_plus: when one of its steps was reached (active, completed, or active when aborted);
 *   restrictive: when one of its teams is in visibility_teams. May complete/save only the steps it owns.
 * - anyone else sees nothing. Things a key cannot see answer 404, so existence does not leak.
 */
import type { CatalogStep, CatalogUser, CatalogWorkflow } from "./catalog.js";
import { USERS, WORKFLOWS } from "./catalog.js";
import { HttpError } from "./errors.js";
import { userByKey, workflowOf } from "./lookup.js";
import type { InstanceState } from "./state.js";

interface UserIndex {
  ownedSteps: Set<number>;
  /** workflows where the user owns at least one step */
  ownerOf: Set<number>;
}

const index = new Map<number, UserIndex>(
  USERS.map((u) => {
    const ownedSteps = new Set<number>();
    const ownerOf = new Set<number>();
    for (const w of WORKFLOWS) {
      for (const s of w.steps) {
        if (s.owners.includes(u.id)) {
          ownedSteps.add(s.id);
          ownerOf.add(w.id);
        }
      }
    }
    return [u.id, { ownedSteps, ownerOf }];
  }),
);

function userIndex(user: CatalogUser): UserIndex {
  return index.get(user.id) ?? { ownedSteps: new Set(), ownerOf: new Set() };
}

/** Resolves `Authorization: Api-Key <key>` to a demo user; 401 otherwise. */
export function authenticate(header: string | undefined): CatalogUser {
  const challenge = { "WWW-Authenticate": 'Api-Key realm="api"' };
  if (!header || !header.trim()) {
    throw new HttpError(
      401,
      "Authentication credentials were not provided. Send the header 'Authorization: Api-Key <key>'.",
      challenge,
    );
  }
  const m = /^Api-Key\s+(\S+)\s*$/i.exec(header.trim());
  if (!m || m[1] === undefined) {
    throw new HttpError(401, "Malformed Authorization header: expected 'Api-Key <key>'.", challenge);
  }
  const user = userByKey(m[1]);
  if (!user) throw new HttpError(401, "Invalid API key.", challenge);
  return user;
}

export const isAdmin = (user: CatalogUser): boolean => user.role === "administrator";
export const isLead = (user: CatalogUser, workflow: CatalogWorkflow): boolean => workflow.leads.includes(user.id);

export function canSeeWorkflow(user: CatalogUser, workflow: CatalogWorkflow): boolean {
  return isAdmin(user) || isLead(user, workflow) || userIndex(user).ownerOf.has(workflow.id);
}

export function canSeeInstance(user: CatalogUser, inst: InstanceState): boolean {
  const workflow = workflowOf(inst.processId);
  if (isAdmin(user) || isLead(user, workflow)) return true;
  const idx = userIndex(user);
  if (!idx.ownerOf.has(workflow.id)) return false;
  switch (inst.visibilityMode) {
    case "public":
      return true;
    case "involved":
    case "involved_plus":
      return inst.reachedStepIds.some((s) => idx.ownedSteps.has(s));
    case "restrictive":
      return inst.visibilityTeams.some((t) => user.teams.includes(t));
  }
}

/** A fast visibility test for scanning many instances of one workflow. */
export function instanceVisibility(user: CatalogUser, workflow: CatalogWorkflow): (inst: InstanceState) => boolean {
  if (isAdmin(user) || isLead(user, workflow)) return () => true;
  if (!userIndex(user).ownerOf.has(workflow.id)) return () => false;
  return (inst) => canSeeInstance(user, inst);
}

export function canActOnStep(user: CatalogUser, workflow: CatalogWorkflow, step: CatalogStep): boolean {
  return isAdmin(user) || isLead(user, workflow) || step.owners.includes(user.id);
}

export function canAbort(user: CatalogUser, workflow: CatalogWorkflow): boolean {
  return isAdmin(user) || isLead(user, workflow);
}

/** One line about what a demo key may do, for the CLI banner. */
export function describeUser(user: CatalogUser): string {
  if (isAdmin(user)) return "administrator: sees and does everything";
  const leads = WORKFLOWS.filter((w) => isLead(user, w)).map((w) => `${w.id} ${w.name}`);
  const owns = [...userIndex(user).ownedSteps];
  const parts: string[] = [];
  if (leads.length) parts.push(`lead of ${leads.join(", ")}`);
  if (owns.length) parts.push(`owner of steps ${owns.join(", ")}`);
  return parts.length ? parts.join("; ") : "sees no workflow";
}

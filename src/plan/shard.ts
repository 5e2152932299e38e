/**
 * `--shard i/n`: n workers (a CI matrix, a Kubernetes Indexed Job) share one rule set without overlap. Worker i keeps
 * the instances with `id % n === i`: deterministic, needs no coordination, and every change, report row and conflict
 * of one instance lands in the same shard, so the union of the n plans is the unsharded plan.
 */
import { UserError } from "../model/errors.js";

export interface Shard {
  index: number;
  count: number;
}

/** More workers than this is a typo, not a deployment. */
export const MAX_SHARDS = 10_000;

export function parseShard(raw: unknown): Shard {
  const s = String(raw ?? "").trim();
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m)
    throw new UserError(`--shard must be INDEX/COUNT with 0 ≤ INDEX < COUNT, e.g. 0/4; got ${JSON.stringify(raw)}`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw new UserError(`--shard ${s}: COUNT must be from 1 to ${MAX_SHARDS}`);
  if (index >= count)
    throw new UserError(`--shard ${s}: INDEX must be below COUNT (shards are numbered 0 to ${count - 1})`);
  return { index, count };
}

export function inShard(instanceId: number, shard: Shard): boolean {
  return instanceId % shard.count === shard.index;
}

export const shardLabel = (shard: Shard): string => `${shard.index}/${shard.count}`;

/**
 * A saved plan's share for one worker: its changes filtered by instance id the same way planning filters the
 * selection. Taken after the plan's digest was checked (the file itself is never changed), so n workers can apply
 * one reviewed plan side by side.
 */
export function shardOfPlan<P extends { changes: ReadonlyArray<{ instance_id: number }> }>(
  plan: P,
  shard: Shard | undefined,
): P {
  if (!shard) return plan;
  return { ...plan, changes: plan.changes.filter((c) => inShard(c.instance_id, shard)) };
}

/**
 * A plan's digest: sha256 over its canonical JSON (keys sorted, `digest` itself left out). `apply` recomputes it to
 * refuse a plan file edited after review.
 */
import { createHash } from "node:crypto";
import type { Plan } from "./plan-types.js";

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function planDigest(plan: Plan | (Plan & { digest?: string })): string {
  const { digest: _ignored, ...rest } = plan as Plan & { digest?: string };
  return `sha256:${createHash("sha256").update(canonicalJson(rest)).digest("hex")}`;
}

export type SignedPlan = Plan & { digest: string };

export function withDigest(plan: Plan): SignedPlan {
  return { ...plan, digest: planDigest(plan) };
}

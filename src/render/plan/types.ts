/** Every plan output format is one module exporting one function of this type (after Spectral's formatters). */
import type { Plan } from "../../plan/types.js";

export interface PlanRenderOptions {
  /** ANSI colours (text only): on a TTY and without NO_COLOR */
  color: boolean;
  /** where the full JSON plan is written, mentioned when output is truncated */
  planFile?: string;
  /** character budget of the whole output (markdown: the 65,536-character pull-request comment limit) */
  maxChars?: number;
}

export type PlanFormatter = (plan: Plan, options: PlanRenderOptions) => string;

/**
 * A format whose output grows with the tenant (the JSON plan: a row per matched instance) also written in pieces, the
 * same text as its PlanFormatter joined.
 */
export type PlanPiecesFormatter = (plan: Plan, options: PlanRenderOptions) => Iterable<string>;

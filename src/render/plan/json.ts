/** The JSON plan (docs/design.md, "The JSON plan"), with its digest, two-space indented, keys in a fixed order. */
import { withDigest } from "../../plan/digest.js";
import type { PlanFormatter } from "./types.js";

export const json: PlanFormatter = (plan) => `${JSON.stringify(withDigest(plan), null, 2)}\n`;

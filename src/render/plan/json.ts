/** The JSON plan (docs/design.md, "The JSON plan"): the very bytes of the plan file, from its one writer. */
import { withDigest } from "../../plan/digest.js";
import { planFileChunks, planFileText } from "../../plan/write.js";
import type { PlanFormatter, PlanPiecesFormatter } from "./types.js";

export const json: PlanFormatter = (plan) => planFileText(plan);

/** The same bytes in pieces, as the plan run writes them to stdout (never the whole plan as one string). */
export const jsonPieces: PlanPiecesFormatter = (plan) => planFileChunks(withDigest(plan));

/** JSON of `plan --compare`: the plan of the working tree's touched rules with `compare` and `impact` (docs/contracts.md, "What a rule edit changes"), digest over all of it. */
import { withDigest } from "../../plan/digest.js";
import type { CompareFormatter } from "./types.js";

export const json: CompareFormatter = (plan) => `${JSON.stringify(withDigest(plan), null, 2)}\n`;

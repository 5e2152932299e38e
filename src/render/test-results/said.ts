/** A rule test failure's words (src/rule-tests/types.ts, `Said`) written out, values as src/render/show.ts shows them. */
import type { Said } from "../../rule-tests/types.js";
import { show, showIds, showWritten } from "../show.js";

export function saidText(s: Said): string {
  if (typeof s === "string") return s;
  return s
    .map((p) =>
      typeof p === "string"
        ? p
        : "value" in p
          ? show(p.value)
          : "written" in p
            ? showWritten(p.written)
            : showIds(p.ids),
    )
    .join("");
}

/** The custom formats of the rule-file schema (./schema.ts), for its validators (./validators.generated.ts). */
import { isDateTimeValue } from "./datetime.js";

export const DATE_TIME_FORMAT = "flowrules-date-time";
export const RUNTIME_FORMAT = "flowrules-duration";

/** `select` keys that the instance list takes but belong to the engine (here, not in ./schema.ts, so messages need no zod). */
export const ENGINE_OWNED_PARAMS = ["cursor", "page_size", "ordering"] as const;

/** The service's total_runtime formats: `00:50`, `01 09:30`, `02:30:00`, and ISO 8601 `PT50M`. */
const CLOCK_RE = /^(?:\d+ )?\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?$/;
const ISO_DURATION_RE = /^P(?!$)(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;

export function isRuntimeValue(s: string): boolean {
  return CLOCK_RE.test(s) || ISO_DURATION_RE.test(s);
}

export const FORMATS = {
  [DATE_TIME_FORMAT]: { type: "string", validate: isDateTimeValue },
  [RUNTIME_FORMAT]: { type: "string", validate: isRuntimeValue },
} as const;

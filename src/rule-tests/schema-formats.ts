/** The formats of the rule-test schema, for its validator (./validator.generated.ts). */
import { isDateTimeValue, isIsoDateTime } from "../rules/datetime.js";
import { DATE_TIME_FORMAT } from "../rules/schema-formats.js";

export const FORMATS = {
  [DATE_TIME_FORMAT]: { type: "string", validate: isDateTimeValue },
  "date-time": { type: "string", validate: isIsoDateTime },
} as const;

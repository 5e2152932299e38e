/** ajv set up once with the rule-file schema, its custom formats, and one validator per action kind. */
import Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { ACTIONS } from "../actions/index.js";
import { isDateTimeValue } from "./datetime.js";
import { buildRulesSchema, DATE_TIME_FORMAT, RUNTIME_FORMAT, SCHEMA_ID } from "./schema.js";

/** The service's total_runtime formats: `00:50`, `01 09:30`, `02:30:00`, and ISO 8601 `PT50M`. */
const CLOCK_RE = /^(?:\d+ )?\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?$/;
const ISO_DURATION_RE = /^P(?!$)(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;

export function isRuntimeValue(s: string): boolean {
  return CLOCK_RE.test(s) || ISO_DURATION_RE.test(s);
}

interface Validators {
  file: ValidateFunction;
  action: Map<string, ValidateFunction>;
}

let cached: Validators | undefined;

// ajv is CommonJS: under NodeNext the default import is module.exports, whose `default` is the class
const Ajv2020 = Ajv2020Module.default;

function validators(): Validators {
  if (cached) return cached;
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true });
  ajv.addFormat(DATE_TIME_FORMAT, { type: "string", validate: isDateTimeValue });
  ajv.addFormat(RUNTIME_FORMAT, { type: "string", validate: isRuntimeValue });
  ajv.addSchema(buildRulesSchema());
  const file = ajv.getSchema(SCHEMA_ID);
  if (!file) throw new Error("rule-file schema did not compile");
  const action = new Map<string, ValidateFunction>();
  for (const m of ACTIONS) {
    const v = ajv.getSchema(`${SCHEMA_ID}#/$defs/action_${m.kind}`);
    if (!v) throw new Error(`schema of action ${m.kind} did not compile`);
    action.set(m.kind, v);
  }
  cached = { file, action };
  return cached;
}

export function validateFile(data: unknown): ErrorObject[] {
  const v = validators().file;
  return v(data) ? [] : [...(v.errors ?? [])];
}

/** Validates one action entry against the schema of the kind it names. */
export function validateAction(kind: string, data: unknown): ErrorObject[] {
  const v = validators().action.get(kind);
  if (!v) return [];
  return v(data) ? [] : [...(v.errors ?? [])];
}

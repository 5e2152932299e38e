/**
 * A synchronous evaluator for the small part of JSONata that rules mostly use: names and paths through objects,
 * literals (and arrays of them), comparisons, `and`/`or`, arithmetic, `in`, `&` on text, `? :`, `( )`, a few of
 * JSONata's functions (`$not`, `$exists`, `$boolean`, `$number`, `$lowercase`, `$uppercase`, `$length`, `$contains`)
 * and the plan's own (`$daysSince`, `$hoursUntil`, `$now`).
 *
 * JSONata's evaluator is asynchronous: every node of every evaluation allocates promises and frames, and at 100,000
 * instances that garbage, not the data, set the plan's peak memory and capped evaluation at ~50,000 instances a
 * second. This evaluator gives exactly JSONata's result or declines: whenever a value is not a plain scalar where
 * JSONata's sequence rules or its errors would matter (an array inside a path, an object compared, a type mismatch
 * JSONata reports, a non-finite number), it returns SLOW and the caller evaluates the expression with JSONata
 * itself, which then gives its own result or error. An expression using anything else is not compiled here at all.
 * test/rules/jsonata-fast.test.ts compares both on generated expressions and data.
 */
import { SLOW, type FastEval } from "../model/rule-types.js";

type Node = Record<string, unknown>;
type Fn = (input: unknown, bindings: Record<string, unknown>) => unknown;

const COMPARISON = new Set(["<", "<=", ">", ">="]);
const ARITHMETIC = new Set(["+", "-", "*", "/", "%"]);
type Scalar = string | number | boolean | null | undefined;

/** JSONata's decimal text that `$number` turns into a number (its hex, octal and binary forms are left to it). */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/;

/**
 * JSONata's functions handled here, by name and number of arguments, on scalar (or undefined) arguments; SLOW where
 * JSONata would raise a type error or cast in a way not reproduced here.
 */
const BUILTINS: Record<string, { arity: number; call: (a: Scalar, b: Scalar) => unknown }> = {
  not: {
    arity: 1,
    call: (v) => {
      const bool = booleanOf(v);
      return bool === undefined ? undefined : !bool;
    },
  },
  exists: { arity: 1, call: (v) => v !== undefined },
  boolean: { arity: 1, call: (v) => booleanOf(v) },
  lowercase: { arity: 1, call: (v) => (v === undefined ? undefined : typeof v === "string" ? v.toLowerCase() : SLOW) },
  uppercase: { arity: 1, call: (v) => (v === undefined ? undefined : typeof v === "string" ? v.toUpperCase() : SLOW) },
  // characters, as JSONata counts them: code points, not UTF-16 units
  length: { arity: 1, call: (v) => (v === undefined ? undefined : typeof v === "string" ? Array.from(v).length : SLOW) },
  number: {
    arity: 1,
    call: (v) => {
      if (v === undefined) return undefined;
      if (typeof v === "number") return v;
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v === "string" && DECIMAL.test(v)) {
        const n = parseFloat(v);
        return Number.isFinite(n) ? n : SLOW;
      }
      return SLOW;
    },
  },
  contains: {
    arity: 2,
    call: (s, token) => {
      // JSONata checks both arguments' types before it looks at either being undefined
      if ((s !== undefined && typeof s !== "string") || (token !== undefined && typeof token !== "string")) return SLOW;
      return s === undefined || token === undefined ? undefined : s.includes(token);
    },
  },
};

/** Keys a node of each type may carry; any other key (stages, predicates, grouping, focus…) is not handled here. */
const KEYS: Record<string, ReadonlySet<string>> = {
  path: new Set(["type", "steps"]),
  name: new Set(["type", "value", "position"]),
  binary: new Set(["type", "value", "position", "lhs", "rhs"]),
  unary: new Set(["type", "value", "position", "expression", "expressions"]),
  number: new Set(["type", "value", "position"]),
  string: new Set(["type", "value", "position"]),
  value: new Set(["type", "value", "position"]),
  condition: new Set(["type", "position", "condition", "then", "else"]),
  block: new Set(["type", "position", "expressions"]),
  function: new Set(["type", "value", "position", "arguments", "procedure"]),
  variable: new Set(["type", "value", "position"]),
};

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as Node).type === "string";
}

function plainNode(n: unknown): n is Node {
  if (!isNode(n)) return false;
  const allowed = KEYS[n.type as string];
  // the parser leaves some keys present but undefined (`name` of a function call): those say nothing
  return allowed !== undefined && Object.keys(n).every((k) => allowed.has(k) || n[k] === undefined);
}

const isScalar = (v: unknown): v is Exclude<Scalar, undefined> =>
  v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));

const isScalarOrUndefined = (v: unknown): v is Scalar => v === undefined || isScalar(v);

/** JSONata's effective boolean value of a scalar or undefined (its `boolean`, undefined kept). */
function booleanOf(v: Scalar): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "number") return v !== 0;
  return v === true;
}

/** One step of a path: JSONata's lookup on an object; SLOW for what its sequence rules would change. */
function lookup(input: unknown, key: string): unknown {
  if (typeof input !== "object" || input === null) return undefined;
  if (Array.isArray(input)) return SLOW;
  return Object.prototype.hasOwnProperty.call(input, key) ? (input as Record<string, unknown>)[key] : undefined;
}

function compilePath(steps: unknown): Fn | undefined {
  if (!Array.isArray(steps) || steps.length === 0) return undefined;
  const names: string[] = [];
  for (const s of steps) {
    if (!plainNode(s) || s.type !== "name" || typeof s.value !== "string") return undefined;
    names.push(s.value);
  }
  return (input) => {
    let v: unknown = input;
    for (const name of names) {
      v = lookup(v, name);
      if (v === SLOW) return SLOW;
      if (v === undefined) return undefined;
    }
    // a function value, or an array holding anything but scalars, is left to JSONata's sequence rules
    if (typeof v === "function") return SLOW;
    if (Array.isArray(v) && !v.every(isScalar)) return SLOW;
    return v;
  };
}

function compileBinary(n: Node): Fn | undefined {
  const op = n.value;
  const lhs = compileNode(n.lhs);
  const rhs = compileNode(n.rhs);
  if (typeof op !== "string" || !lhs || !rhs) return undefined;
  if (op === "and" || op === "or") {
    return (input, b) => {
      const l = lhs(input, b);
      if (!isScalarOrUndefined(l)) return SLOW;
      const lb = booleanOf(l) ?? false;
      if (op === "and" ? !lb : lb) return lb;
      const r = rhs(input, b);
      if (!isScalarOrUndefined(r)) return SLOW;
      return booleanOf(r) ?? false;
    };
  }
  if (op === "=" || op === "!=") {
    return (input, b) => {
      const l = lhs(input, b);
      const r = rhs(input, b);
      if (!isScalarOrUndefined(l) || !isScalarOrUndefined(r)) return SLOW;
      if (l === undefined || r === undefined) return false;
      return op === "=" ? l === r : l !== r;
    };
  }
  if (COMPARISON.has(op)) {
    return (input, b) => {
      const l = lhs(input, b);
      const r = rhs(input, b);
      const lt = typeof l;
      const rt = typeof r;
      // JSONata's T2010/T2009 (not comparable, different types) come from JSONata itself
      if ((lt !== "undefined" && lt !== "string" && lt !== "number") || (rt !== "undefined" && rt !== "string" && rt !== "number")) return SLOW;
      if ((lt === "number" && !Number.isFinite(l)) || (rt === "number" && !Number.isFinite(r))) return SLOW;
      if (l === undefined || r === undefined) return undefined;
      if (lt !== rt) return SLOW;
      const a = l as string | number;
      const c = r as string | number;
      return op === "<" ? a < c : op === "<=" ? a <= c : op === ">" ? a > c : a >= c;
    };
  }
  if (ARITHMETIC.has(op)) {
    return (input, b) => {
      const l = lhs(input, b);
      const r = rhs(input, b);
      if ((l !== undefined && (typeof l !== "number" || !Number.isFinite(l))) || (r !== undefined && (typeof r !== "number" || !Number.isFinite(r)))) return SLOW;
      if (l === undefined || r === undefined) return undefined;
      const x = l as number;
      const y = r as number;
      const v = op === "+" ? x + y : op === "-" ? x - y : op === "*" ? x * y : op === "/" ? x / y : x % y;
      return Number.isFinite(v) ? v : SLOW;
    };
  }
  if (op === "&") {
    return (input, b) => {
      const l = lhs(input, b);
      const r = rhs(input, b);
      // JSONata writes numbers and other values its own way ($string): only text is joined here
      if ((l !== undefined && typeof l !== "string") || (r !== undefined && typeof r !== "string")) return SLOW;
      return (l ?? "") + (r ?? "");
    };
  }
  if (op === "in") {
    return (input, b) => {
      const l = lhs(input, b);
      const r = rhs(input, b);
      if (!isScalarOrUndefined(l) || (r !== undefined && !isScalar(r) && !Array.isArray(r))) return SLOW;
      if (l === undefined || r === undefined) return false;
      return Array.isArray(r) ? r.some((x) => x === l) : r === l;
    };
  }
  return undefined;
}

function compileFunction(n: Node): Fn | undefined {
  const proc = n.procedure;
  const args = n.arguments;
  if (n.value !== "(" || !plainNode(proc) || proc.type !== "variable" || typeof proc.value !== "string" || proc.value === "") return undefined;
  if (!Array.isArray(args)) return undefined;
  const compiled: Fn[] = [];
  for (const a of args) {
    const f = compileNode(a);
    if (!f) return undefined;
    compiled.push(f);
  }
  const name = proc.value;
  const own = Object.prototype.hasOwnProperty.call(BUILTINS, name) ? BUILTINS[name] : undefined;
  const builtin = own && own.arity === compiled.length ? own : undefined;
  return (input, b) => {
    const values: Scalar[] = [];
    for (const f of compiled) {
      const v = f(input, b);
      // a function is given scalars only: arrays and objects go through JSONata's argument rules
      if (!isScalarOrUndefined(v)) return SLOW;
      values.push(v);
    }
    // the plan's bindings shadow JSONata's functions of the same name, as in JSONata
    const bound = Object.prototype.hasOwnProperty.call(b, name) ? b[name] : undefined;
    if (typeof bound === "function") {
      const v: unknown = (bound as (...a: unknown[]) => unknown)(...values);
      return isScalarOrUndefined(v) ? v : SLOW;
    }
    if (bound !== undefined || !builtin) return SLOW;
    return builtin.call(values[0], values[1]);
  };
}

function compileNode(n: unknown): Fn | undefined {
  if (!plainNode(n)) return undefined;
  switch (n.type) {
    case "path":
      return compilePath(n.steps);
    case "name":
      return typeof n.value === "string" ? compilePath([n]) : undefined;
    case "number":
      return typeof n.value === "number" && Number.isFinite(n.value) ? literal(n.value) : undefined;
    case "string":
      return typeof n.value === "string" ? literal(n.value) : undefined;
    case "value":
      return n.value === null || typeof n.value === "boolean" ? literal(n.value) : undefined;
    case "binary":
      return compileBinary(n);
    case "unary": {
      if (n.value === "[") return compileLiteralArray(n.expressions);
      if (n.value !== "-") return undefined;
      const e = compileNode(n.expression);
      if (!e) return undefined;
      return (input, b) => {
        const v = e(input, b);
        if (v === undefined) return undefined;
        return typeof v === "number" && Number.isFinite(v) ? -v : SLOW;
      };
    }
    case "condition": {
      const c = compileNode(n.condition);
      const t = compileNode(n.then);
      const e = n.else === undefined ? undefined : compileNode(n.else);
      if (!c || !t || (n.else !== undefined && !e)) return undefined;
      return (input, b) => {
        const v = c(input, b);
        if (!isScalarOrUndefined(v)) return SLOW;
        if (booleanOf(v)) return t(input, b);
        return e ? e(input, b) : undefined;
      };
    }
    case "block": {
      const list = n.expressions;
      if (!Array.isArray(list) || list.length !== 1) return undefined;
      return compileNode(list[0]);
    }
    case "function":
      return compileFunction(n);
  }
  return undefined;
}

function literal(v: unknown): Fn {
  return () => v;
}

/** `["EUR", "GBP"]`: an array of literals (the usual right side of `in`); a new array each time, as JSONata gives. */
function compileLiteralArray(items: unknown): Fn | undefined {
  if (!Array.isArray(items)) return undefined;
  const values: unknown[] = [];
  for (const item of items) {
    if (!plainNode(item)) return undefined;
    if (item.type === "string" && typeof item.value === "string") values.push(item.value);
    else if (item.type === "number" && typeof item.value === "number" && Number.isFinite(item.value)) values.push(item.value);
    else if (item.type === "value" && (item.value === null || typeof item.value === "boolean")) values.push(item.value);
    else return undefined;
  }
  return () => [...values];
}

/**
 * The synchronous evaluator of a JSONata syntax tree, or undefined when the expression uses anything it does not
 * handle. The evaluator returns SLOW when JSONata itself must evaluate this input.
 */
export function compileFast(ast: unknown): FastEval | undefined {
  const f = compileNode(ast);
  if (!f) return undefined;
  return (input, bindings) => {
    try {
      return f(input, bindings);
    } catch {
      // a binding that throws: JSONata reports it in its own words
      return SLOW;
    }
  };
}

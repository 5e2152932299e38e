/**
 * What a JSONata expression reads from the evaluation context { instance, fields, snapshot, tags, now }, found on its
 * syntax tree. Used for the alias check, for `needs`, and for calls to functions that do not exist. Whenever the tree
 * is too dynamic to tell, the answer errs towards "reads everything".
 */
import type { Expression } from "jsonata";

/** Names at the top of the evaluation context. */
export const CONTEXT_NAMES = ["instance", "fields", "snapshot", "tags", "now"] as const;

/** Keys of `instance` that come with the list element (docs/service.md, "Resources"), so reading them needs no GET /instances/{id}/. */
export const LIST_ELEMENT_KEYS = ["id", "name", "status", "public_url"] as const;

/** Functions bound by the engine in addition to JSONata's own. */
export const HELPER_FUNCTIONS = ["daysSince", "hoursUntil", "waitingSince", "waitingDays", "waitingHours"] as const;

/** The helpers that read how long a step has waited: they need the full record with step completion times. */
export const WAITING_FUNCTIONS = ["waitingSince", "waitingDays", "waitingHours"] as const;

/** A call of a waiting helper: its step argument as written (a literal), `null` when computed, absent when none. */
export interface WaitingCall {
  name: string;
  at: number;
  step?: { written: string | number; at: number } | null;
}

/** JSONata 2 built-in functions. */
export const BUILTIN_FUNCTIONS = [
  "sum", "count", "max", "min", "average", "string", "substring", "substringBefore", "substringAfter", "lowercase",
  "uppercase", "length", "trim", "pad", "match", "contains", "replace", "split", "join", "formatNumber",
  "formatBase", "formatInteger", "parseInteger", "number", "floor", "ceil", "round", "abs", "sqrt", "power",
  "random", "boolean", "not", "map", "zip", "filter", "single", "foldLeft", "sift", "keys", "lookup", "append",
  "exists", "spread", "merge", "reverse", "each", "error", "assert", "type", "sort", "shuffle", "distinct",
  "base64encode", "base64decode", "encodeUrlComponent", "encodeUrl", "decodeUrlComponent", "decodeUrl", "eval",
  "toMillis", "fromMillis", "clone", "now", "millis", "reduce",
] as const;

export interface NameRef {
  name: string;
  /** index of the name in the expression text */
  at: number;
}

export interface ExprRefs {
  /** `fields.<alias>` reads */
  fields: NameRef[];
  /** reads `fields` as a whole (`fields`, `fields.*`, `$lookup(fields, …)`) */
  allFields: boolean;
  /** reads something of the full instance record */
  record: boolean;
  /** names read at the top of the context that it does not hold (`amount` instead of `fields.amount`) */
  unknownRoots: NameRef[];
  /** `$f(...)` calls, with the names bound inside the expression (`$x := …`, lambda parameters) */
  calls: NameRef[];
  /** `name(...)`: a call of a plain name, which JSONata only reports at run time (functions start with `$`) */
  nameCalls: NameRef[];
  bound: Set<string>;
  /** regular expression literals, with the index where each starts */
  regexes: Array<{ re: RegExp; at: number }>;
  /** calls of `$waitingSince` / `$waitingDays` / `$waitingHours` (they read the record with step completion times) */
  waiting: WaitingCall[];
}

interface Node {
  type: string;
  value?: unknown;
  position?: number;
  [key: string]: unknown;
}

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { type?: unknown }).type === "string";
}

/**
 * root: evaluated against the context object itself; nested: against an item (inside a predicate, a later path
 * step); lambda: unknown (a function body runs against its caller's input), so reads count but no warnings.
 */
type Scope = "root" | "nested" | "lambda";

function nameStart(n: Node): number {
  const len = typeof n.value === "string" ? n.value.length : 0;
  return Math.max(0, (n.position ?? len) - len);
}

function children(n: Node): unknown[] {
  const out: unknown[] = [];
  for (const [k, v] of Object.entries(n)) {
    if (k === "type" || k === "position") continue;
    out.push(v);
  }
  return out;
}

/** The step argument of a waiting helper: a string or integer literal is checked against the workflow. */
function waitingCall(name: string, at: number, args: unknown): WaitingCall {
  const first: unknown = Array.isArray(args) ? args[0] : undefined;
  if (first === undefined) return { name, at };
  if (isNode(first) && first.type === "string" && typeof first.value === "string") {
    // the token ends at `position`, after the closing quote
    const start = Math.max(0, (first.position ?? 0) - first.value.length - 2);
    return { name, at, step: { written: first.value, at: start } };
  }
  if (isNode(first) && first.type === "number" && typeof first.value === "number" && Number.isInteger(first.value)) {
    const start = Math.max(0, (first.position ?? 0) - String(first.value).length);
    return { name, at, step: { written: first.value, at: start } };
  }
  return { name, at, step: null };
}

export function exprRefs(expr: Expression): ExprRefs {
  const refs: ExprRefs = { fields: [], allFields: false, record: false, unknownRoots: [], calls: [], nameCalls: [], bound: new Set(), regexes: [], waiting: [] };
  const everything = (): void => {
    refs.record = true;
    refs.allFields = true;
  };

  const walkAny = (v: unknown, scope: Scope): void => {
    if (Array.isArray(v)) for (const x of v) walkAny(x, scope);
    else if (isNode(v)) walk(v, scope);
  };

  /** The first name of a path read from the context, and what follows it. */
  const contextRead = (first: Node, rest: Node[], scope: Scope): void => {
    const name = typeof first.value === "string" ? first.value : "";
    const hasStages = Array.isArray(first.stages) && first.stages.length > 0;
    const next = rest[0];
    switch (name) {
      case "fields":
        if (next && next.type === "name" && typeof next.value === "string" && !hasStages) {
          refs.fields.push({ name: next.value, at: nameStart(next) });
        } else {
          refs.allFields = true;
        }
        break;
      case "instance":
        if (
          hasStages ||
          !next ||
          next.type !== "name" ||
          !(LIST_ELEMENT_KEYS as readonly string[]).includes(String(next.value))
        ) {
          refs.record = true;
        }
        break;
      case "snapshot":
      case "tags":
        refs.record = true;
        break;
      case "now":
        break;
      default:
        if (scope === "root") refs.unknownRoots.push({ name, at: nameStart(first) });
    }
  };

  const walkPath = (n: Node, scope: Scope): void => {
    const steps = (Array.isArray(n.steps) ? n.steps : []).filter(isNode);
    let i = 0;
    let readScope: Scope | undefined = scope;
    // `$` is the current input (the context at the root), `$$` always the context
    const head = steps[0];
    if (head && head.type === "variable" && (head.value === "" || head.value === "$")) {
      readScope = head.value === "$" ? "root" : scope;
      i = 1;
      if (steps.length === 1 && readScope !== "nested") everything();
      walkStages(head, scope);
    }
    const first = steps[i];
    if (first && first.type === "name" && readScope !== "nested") {
      contextRead(first, steps.slice(i + 1), readScope);
    } else if (first && (first.type === "wildcard" || first.type === "descendant") && readScope !== "nested") {
      everything();
    } else if (first && first.type === "name" && readScope === "nested") {
      // an item's own key; the words of the context still count, to stay on the safe side
      if (first.value === "snapshot" || first.value === "tags" || first.value === "instance") refs.record = true;
    }
    steps.forEach((s, k) => {
      if (k < i) return;
      if (k === i && s.type === "name") walkStages(s, scope);
      else walk(s, k === i ? scope : "nested");
    });
    for (const [key, v] of Object.entries(n)) if (key !== "steps" && key !== "type" && key !== "position") walkAny(v, "nested");
  };

  const walkStages = (s: Node, _scope: Scope): void => {
    for (const [key, v] of Object.entries(s)) {
      if (key === "type" || key === "position" || key === "value") continue;
      walkAny(v, "nested");
    }
  };

  const walk = (n: Node, scope: Scope): void => {
    switch (n.type) {
      case "path":
        walkPath(n, scope);
        return;
      case "name":
        // a bare name outside a path (older trees): treat like a one-step path
        walkPath({ type: "path", steps: [n] }, scope);
        return;
      case "variable":
        if ((n.value === "" && scope !== "nested") || n.value === "$") everything();
        return;
      case "wildcard":
      case "descendant":
        if (scope !== "nested") everything();
        return;
      case "function":
      case "partial": {
        const proc = n.procedure;
        if (isNode(proc) && proc.type === "variable" && typeof proc.value === "string") {
          refs.calls.push({ name: proc.value, at: nameStart(proc) });
          if ((WAITING_FUNCTIONS as readonly string[]).includes(proc.value)) {
            refs.record = true;
            refs.waiting.push(waitingCall(proc.value, nameStart(proc), n.arguments));
          }
        } else if (isNode(proc) && proc.type === "path" && Array.isArray(proc.steps) && proc.steps.length === 1) {
          const step: unknown = proc.steps[0];
          if (isNode(step) && step.type === "name" && typeof step.value === "string") {
            refs.nameCalls.push({ name: step.value, at: nameStart(step) });
          } else {
            walkAny(proc, scope);
          }
        } else {
          walkAny(proc, scope);
        }
        walkAny(n.arguments, scope);
        return;
      }
      case "lambda":
        for (const a of Array.isArray(n.arguments) ? n.arguments : []) {
          if (isNode(a) && typeof a.value === "string") refs.bound.add(a.value);
        }
        walkAny(n.body, "lambda");
        return;
      case "regex":
        if (n.value instanceof RegExp) {
          // the token ends at `position`: /source/ and the flags written (JSONata adds g)
          const written = n.value.source.length + 2 + n.value.flags.replace("g", "").length;
          refs.regexes.push({ re: n.value, at: Math.max(0, (n.position ?? written) - written) });
        }
        return;
      case "bind":
        if (isNode(n.lhs) && typeof n.lhs.value === "string") refs.bound.add(n.lhs.value);
        walkAny(n.rhs, scope);
        return;
      default:
        for (const c of children(n)) walkAny(c, scope);
    }
  };

  walkAny(expr.ast(), "root");
  return refs;
}

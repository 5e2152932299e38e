/**
 * Markdown reference of a JSON Schema (the subset flowrules writes: properties, $defs/$ref, anyOf, items,
 * additionalProperties, const/enum and the usual bounds), built only from the schema, so docs/rules.md cannot drift
 * from schemas/*.schema.json. Every key gets a row: its type, whether it is required, its bounds and its description;
 * inline objects get a section of their own, named by their path.
 */
import { z } from "zod";
import { cell } from "./markdown.js";

export interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  description?: string;
  title?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  pattern?: string;
  format?: string;
  default?: unknown;
  $defs?: Record<string, SchemaNode>;
}

const Node: z.ZodType<SchemaNode> = z.lazy(() =>
  z
    .object({
      $ref: z.string().optional(),
      type: z.union([z.string(), z.array(z.string())]).optional(),
      description: z.string().optional(),
      title: z.string().optional(),
      properties: z.record(z.string(), Node).optional(),
      required: z.array(z.string()).optional(),
      additionalProperties: z.union([z.boolean(), Node]).optional(),
      items: Node.optional(),
      anyOf: z.array(Node).optional(),
      oneOf: z.array(Node).optional(),
      const: z.unknown().optional(),
      enum: z.array(z.unknown()).optional(),
      minLength: z.number().optional(),
      maxLength: z.number().optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      minItems: z.number().optional(),
      maxItems: z.number().optional(),
      uniqueItems: z.boolean().optional(),
      pattern: z.string().optional(),
      format: z.string().optional(),
      default: z.unknown().optional(),
      $defs: z.record(z.string(), Node).optional(),
    })
    .passthrough(),
);

/** Parses a schema file's JSON; an unexpected shape fails here rather than rendering half a reference. */
export function parseSchema(raw: unknown): SchemaNode {
  return Node.parse(raw);
}

interface Section {
  id: string;
  heading: string;
  node: SchemaNode;
}

const code = (v: unknown): string => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;
const slug = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replace(/ /g, "-");

function bounds(n: SchemaNode): string[] {
  const out: string[] = [];
  if (n.minimum !== undefined) out.push(`≥ ${n.minimum}`);
  if (n.maximum !== undefined) out.push(`≤ ${n.maximum}`);
  if (n.minLength !== undefined) out.push(n.minLength === 1 ? "not empty" : `at least ${n.minLength} characters`);
  if (n.maxLength !== undefined) out.push(`at most ${n.maxLength} characters`);
  if (n.minItems !== undefined) out.push(`at least ${n.minItems} item${n.minItems === 1 ? "" : "s"}`);
  if (n.maxItems !== undefined) out.push(`at most ${n.maxItems} items`);
  if (n.uniqueItems) out.push("no duplicates");
  if (n.pattern !== undefined) out.push(`matches ${code(n.pattern)}`);
  if (n.format !== undefined) out.push(`format ${n.format}`);
  if (n.default !== undefined) out.push(`default ${code(n.default)}`);
  return out;
}

class Renderer {
  private readonly sections: Section[] = [];
  private readonly defIds = new Map<string, string>();

  constructor(
    private readonly root: SchemaNode,
    private readonly prefix: string,
  ) {
    for (const name of Object.keys(root.$defs ?? {})) this.defIds.set(`#/$defs/${name}`, slug(`${prefix} ${name}`));
  }

  private isObject(n: SchemaNode): boolean {
    return n.type === "object" && n.properties !== undefined;
  }

  /** The type in words; inline objects are queued as sections of their own and linked. */
  private typeOf(n: SchemaNode, path: string): string {
    if (n.$ref !== undefined) {
      const id = this.defIds.get(n.$ref);
      if (id === undefined) throw new Error(`unresolved $ref ${n.$ref} at ${path}`);
      return `[${n.$ref.replace("#/$defs/", "")}](#${id})`;
    }
    const variants = n.anyOf ?? n.oneOf;
    if (variants) return variants.map((v, i) => this.typeOf(v, variants.length > 1 ? `${path} (form ${i + 1})` : path)).join(" or ");
    const b = bounds(n);
    const suffix = b.length > 0 ? ` (${b.join(", ")})` : "";
    if (n.const !== undefined) return `${code(n.const)} (constant)`;
    if (n.enum !== undefined) return `one of ${n.enum.map(code).join(", ")}`;
    const type = Array.isArray(n.type) ? n.type.join(" or ") : n.type;
    if (type === "array") return `list of ${n.items ? this.typeOf(n.items, `${path}[]`) : "anything"}${suffix}`;
    if (type === "object") {
      if (this.isObject(n) && Object.keys(n.properties ?? {}).length > 0) {
        const id = slug(`${this.prefix} ${path}`);
        this.sections.push({ id, heading: `\`${path}\``, node: n });
        return `[object](#${id})`;
      }
      if (this.isObject(n)) return "empty object `{}`";
      if (typeof n.additionalProperties === "object") return `map of name → ${this.typeOf(n.additionalProperties, `${path}.<name>`)}`;
      return "object";
    }
    return `${type ?? "any value"}${suffix}`;
  }

  private variantNotes(n: SchemaNode): string {
    const variants = n.anyOf ?? n.oneOf;
    if (!variants) return "";
    const notes = variants.flatMap((v) => (v.description && v.description !== n.description ? [v.description] : []));
    return notes.length > 0 ? ` Forms: ${notes.map((d, i) => `(${i + 1}) ${d}`).join(" ")}` : "";
  }

  private table(n: SchemaNode, path: string): string[] {
    const props = Object.entries(n.properties ?? {});
    if (props.length === 0) return ["No keys."];
    const required = new Set(n.required ?? []);
    const rows = props.map(([key, p]) => {
      const type = this.typeOf(p, path === "" ? key : `${path}.${key}`);
      const desc = `${p.description ?? ""}${this.variantNotes(p)}`;
      return `| \`${key}\` | ${type.replace(/\|/g, "\\|")} | ${required.has(key) ? "yes" : "no"} | ${cell(desc)} |`;
    });
    const extra =
      n.additionalProperties === false ? ["", "No other keys are allowed."] : typeof n.additionalProperties === "object" ? ["", `Other keys: ${this.typeOf(n.additionalProperties, `${path}.<name>`)}.`] : [];
    return ["| Key | Type | Required | Description |", "| --- | --- | --- | --- |", ...rows, ...extra];
  }

  /** One block per schema node: description, then its keys (or its forms when it is a choice). */
  private body(n: SchemaNode, path: string): string[] {
    const out: string[] = [];
    if (n.description) out.push(n.description, "");
    const variants = n.anyOf ?? n.oneOf;
    if (variants) {
      out.push("One of:", "");
      variants.forEach((v, i) => {
        const inline = this.isObject(v) ? this.typeOf(v, `${path} (form ${i + 1})`) : this.typeOf(v, path);
        const desc = v.description && v.description !== n.description ? ` — ${v.description}` : "";
        out.push(`- ${inline}${desc}`);
      });
    } else if (this.isObject(n)) {
      out.push(...this.table(n, path));
    } else {
      out.push(`Type: ${this.typeOf(n, path)}`);
    }
    return out;
  }

  render(level: number): string {
    const h = "#".repeat(level);
    const out: string[] = [];
    out.push(...this.body(this.root, ""), "");
    // sections found while rendering are rendered in turn (depth-first order of discovery keeps the output stable)
    const rendered = new Set<string>();
    const drain = (): void => {
      while (this.sections.length > 0) {
        const s = this.sections.shift()!;
        if (rendered.has(s.id)) continue;
        rendered.add(s.id);
        out.push(`${h}# ${s.heading}`, "", `<a id="${s.id}"></a>`, "", ...this.body({ ...s.node }, s.heading.replace(/`/g, "")), "");
      }
    };
    drain();
    for (const [name, def] of Object.entries(this.root.$defs ?? {})) {
      const id = this.defIds.get(`#/$defs/${name}`)!;
      out.push(`${h} ${name}`, "", `<a id="${id}"></a>`, "", ...this.body(def, name), "");
      drain();
    }
    return out.join("\n");
  }
}

/** The reference of one schema, its headings at `level` (2 → `##`); `prefix` keeps anchors unique per schema. */
export function schemaReference(schema: SchemaNode, prefix: string, level = 2): string {
  return new Renderer(schema, prefix).render(level);
}

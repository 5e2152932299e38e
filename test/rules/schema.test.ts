/** The committed JSON Schema is current, and shaped for editors: named keys, descriptions, no open maps. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import Ajv2020Module from "ajv/dist/2020.js";
import { renderRulesSchema, SCHEMA_FILE } from "../../src/rules/write-schema.js";
import { buildRulesSchema } from "../../src/rules/schema.js";
import { ACTIONS } from "../../src/actions/index.js";
import { DATE_TIME_PARAMS } from "../../src/rules/datetime.js";
import { isRuntimeValue } from "../../src/rules/validate-schema.js";

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every sub-schema with the JSON path to it. */
function* walk(s: unknown, path: string): Generator<[string, Json]> {
  if (Array.isArray(s)) {
    for (const [i, x] of s.entries()) yield* walk(x, `${path}/${i}`);
    return;
  }
  if (!isObj(s)) return;
  yield [path, s];
  for (const [k, v] of Object.entries(s)) if (k !== "enum" && k !== "const") yield* walk(v, `${path}/${k}`);
}

const schema = buildRulesSchema();

describe("rules.schema.json", () => {
  it("the committed file is up to date (run `npm run schema`)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(renderRulesSchema());
  });

  it("is draft 2020-12 with $id and title, and compiles in strict ajv", () => {
    expect(schema).toMatchObject({ $schema: "https://json-schema.org/draft/2020-12/schema", $id: expect.stringMatching(/^https:\/\//), title: expect.any(String) });
    const ajv = new Ajv2020Module.default({ strict: true, validateFormats: false });
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  it("names every key as a property, with a description, and never uses patternProperties", () => {
    let properties = 0;
    for (const [path, s] of walk(schema, "#")) {
      expect(s, path).not.toHaveProperty("patternProperties");
      if (!isObj(s.properties)) continue;
      for (const [key, p] of Object.entries(s.properties)) {
        properties++;
        expect(isObj(p) && typeof p.description === "string" && p.description.length > 10, `${path}/properties/${key}`).toBe(true);
      }
    }
    expect(properties).toBeGreaterThan(40);
  });

  it("closes every object except action input values and the alias map", () => {
    for (const [path, s] of walk(schema, "#")) {
      if (s.type !== "object") continue;
      if (path.endsWith("/properties/fields")) {
        expect(s.additionalProperties).toEqual({ $ref: "#/$defs/field" });
        continue;
      }
      expect(s.additionalProperties, path).toBe(false);
    }
  });

  it("is assembled from the action modules' fragments", () => {
    const defs = schema.$defs as Json;
    // a kind's mapping form is `action_<kind>`; a kind that may also be a bare word (abort) has `action_<kind>_word`
    for (const m of ACTIONS) {
      const alternatives = Array.isArray(m.schema.anyOf) ? (m.schema.anyOf as Json[]) : [m.schema];
      expect(defs[`action_${m.kind}`]).toBe(alternatives.find((a) => a.type === "object"));
      const word = alternatives.find((a) => a.type !== "object");
      if (word) expect(defs[`action_${m.kind}_word`]).toBe(word);
    }
  });

  it("select offers exactly the query parameters of spec 4.2 without paging and ordering", () => {
    const select = (schema.$defs as Json).select as Json;
    const keys = Object.keys(select.properties as Json).sort();
    expect(keys).toEqual(
      [
        "status", "priority", "name", "query", "tags", "organization", "process", "lead_user", "active_step_id",
        "progress_min", "progress_max", "total_runtime_min", "total_runtime_max", ...DATE_TIME_PARAMS,
      ].sort(),
    );
    const props = select.properties as Record<string, Json>;
    expect(props.priority!.enum).toEqual(["H", "V"]);
    expect(props.progress_min).toMatchObject({ type: "integer", minimum: 0, maximum: 100 });
    expect(select.additionalProperties).toBe(false);
  });

  it("requires version 1, and positive limits", () => {
    expect((schema.properties as Json).version).toMatchObject({ const: 1 });
    expect(schema.required).toEqual(["version", "rules"]);
    const rule = (schema.$defs as Json).rule as Json;
    expect(((rule.properties as Json).limits as Json).properties).toMatchObject({ max_instances: { type: "integer", minimum: 1 } });
  });

  it.each([
    ["00:50", true], ["01 09:30", true], ["02:30:00", true], ["PT50M", true], ["P1DT2H", true], ["12:00:00.5", true],
    ["90 minutes", false], ["PT", false], ["P", false], ["-PT5M", false], ["5", false], ["1:2", false],
  ])("total_runtime %j valid=%s", (v, ok) => {
    expect(isRuntimeValue(v)).toBe(ok);
  });
});

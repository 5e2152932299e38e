/** The published test-file schema is the generated one, describes every key, and the shipped test files point at it. */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { discover } from "../../src/rule-tests/discover.js";
import { parseTestText } from "../../src/rule-tests/parse.js";
import { testSchemaText, TEST_SCHEMA_FILE } from "../../src/rule-tests/write-schema.js";

function undescribed(schema: unknown, path: string, out: string[]): string[] {
  if (typeof schema !== "object" || schema === null) return out;
  const s = schema as Record<string, unknown>;
  const props = s.properties;
  if (typeof props === "object" && props !== null) {
    for (const [k, v] of Object.entries(props)) {
      if (typeof v !== "object" || v === null || typeof (v as Record<string, unknown>).description !== "string")
        out.push(`${path}.${k}`);
      undescribed(v, `${path}.${k}`, out);
    }
  }
  for (const key of ["items", "additionalProperties"]) undescribed(s[key], `${path}[${key}]`, out);
  for (const key of ["anyOf", "oneOf"])
    if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((b, i) => undescribed(b, `${path}|${i}`, out));
  return out;
}

describe("rules-test schema", () => {
  it("schemas/rules-test.schema.json is up to date (npm run schema)", async () => {
    expect(await readFile(TEST_SCHEMA_FILE, "utf8")).toBe(testSchemaText());
  });

  it("every key has a description and no object accepts unknown keys", () => {
    const schema = JSON.parse(testSchemaText()) as unknown;
    expect(undescribed(schema, "$", [])).toEqual([]);
    const open: string[] = [];
    const walk = (s: unknown, path: string): void => {
      if (typeof s !== "object" || s === null) return;
      const o = s as Record<string, unknown>;
      if (o.type === "object" && o.properties && o.additionalProperties !== false) open.push(path);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    };
    walk(schema, "#");
    expect(open).toEqual([]);
  });

  it("every shipped test file names the schema for editors and is valid", async () => {
    const found = await discover(["examples/", "rules/"]);
    expect(found.testFiles.length).toBeGreaterThanOrEqual(5);
    for (const file of found.testFiles) {
      const text = await readFile(file, "utf8");
      expect(text, file).toMatch(/^# yaml-language-server: \$schema=(\.\.\/)+schemas\/rules-test\.schema\.json$/m);
      expect(parseTestText(file, text).diagnostics, file).toEqual([]);
    }
  });

  it("rejects a test file without tests or with a wrong version, located", () => {
    const r = parseTestText("t.test.yaml", 'version: 2\nnow: "2025-01-01T00:00:00Z"\ntests: []\n');
    expect(r.data).toBeUndefined();
    expect(r.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`)).toEqual([
      "1:10 version must be 1 (the only version of the rule format), not 2",
      '3:8 "tests" must not be empty',
    ]);
  });
});

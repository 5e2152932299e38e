/**
 * The rule-test validator is compiled ahead of time (src/rule-tests/validator.generated.ts, `npm run schema`): the
 * committed file is what the generator writes today, and it answers every document — rule-test files of the
 * repository, randomly edited — exactly as ajv's own compilation of the schema does, errors and all.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEST_SCHEMA_ID } from "../../src/rule-tests/schema.js";
import { validate } from "../../src/rule-tests/validator.generated.js";
import { renderTestsValidator, testsAjv, VALIDATOR_FILE } from "../../src/rule-tests/write-validator.js";
import { editedDocument, yamlCorpus } from "../helpers/mutate.js";

const corpus = yamlCorpus(["rules", "examples", "test/fixtures"], /\.test\.ya?ml$/);

describe("precompiled rule-test validator", () => {
  it("the committed file is current (run `npm run schema`)", () => {
    expect(readFileSync(VALIDATOR_FILE, "utf8")).toBe(renderTestsValidator());
  });

  it("answers every edited rule-test file as ajv's compilation does", () => {
    expect(corpus.length).toBeGreaterThan(5);
    const compiled = testsAjv().getSchema(TEST_SCHEMA_ID);
    if (!compiled) throw new Error("the rule-test schema did not compile");
    let invalid = 0;
    fc.assert(
      fc.property(editedDocument(corpus), (doc) => {
        const ok = compiled(doc);
        const expected = ok ? [] : [...(compiled.errors ?? [])];
        if (!ok) invalid++;
        expect(validate(doc) ? [] : [...(validate.errors ?? [])]).toEqual(expected);
      }),
      { numRuns: 300 },
    );
    expect(invalid).toBeGreaterThan(50);
  });
});

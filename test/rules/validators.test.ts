/**
 * The rule-file validators are compiled ahead of time (src/rules/validators.generated.ts, `npm run schema`): the
 * committed file is what the generator writes today, and it answers every document — rule files of the repository,
 * randomly edited — exactly as ajv's own compilation of the schema does, errors and all.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../../src/actions/index.js";
import { SCHEMA_ID } from "../../src/rules/schema.js";
import { validateAction, validateFile } from "../../src/rules/validate-schema.js";
import { KINDS } from "../../src/rules/validators.generated.js";
import { rulesValidatorsNow } from "../../src/rules/validators-now.js";
import { kindsFingerprint } from "../../src/rules/kinds-fingerprint.js";
import { renderRulesValidators, rulesAjv, VALIDATORS_FILE } from "../../src/rules/write-validators.js";
import { editedDocument, yamlCorpus } from "../helpers/mutate.js";

const corpus = yamlCorpus(["rules", "examples", "test/fixtures/rules"], /(?<!\.test)\.ya?ml$/);
const ajv = rulesAjv();
const compiled = ajv.getSchema(SCHEMA_ID);

const errorsOf = (v: NonNullable<typeof compiled>, data: unknown): unknown[] => (v(data) ? [] : [...(v.errors ?? [])]);

describe("precompiled rule-file validators", () => {
  it("the committed file is current (run `npm run schema`), for the kinds of this build", () => {
    expect(readFileSync(VALIDATORS_FILE, "utf8")).toBe(renderRulesValidators());
    // so a run uses it; with other kinds (test/actions/dummy-kind.test.ts) the schema is compiled when run
    expect(KINDS).toBe(kindsFingerprint());
  });

  it("answer every edited rule file as ajv's compilation does", () => {
    expect(corpus.length).toBeGreaterThan(20);
    if (!compiled) throw new Error("the rule-file schema did not compile");
    const now = rulesValidatorsNow().file;
    if (!now) throw new Error("no rule-file validator compiled now");
    let invalid = 0;
    fc.assert(
      fc.property(editedDocument(corpus), (doc) => {
        const expected = errorsOf(compiled, doc);
        if (expected.length > 0) invalid++;
        expect(validateFile(doc)).toEqual(expected);
        // the run-time compilation, for kinds the file was not generated for, answers alike
        expect(errorsOf(now, doc)).toEqual(expected);
      }),
      { numRuns: 400 },
    );
    // the edits reach the schema: most documents are refused, for many different reasons
    expect(invalid).toBeGreaterThan(100);
  });

  it("answer each action kind's entries as ajv's compilation does", () => {
    const entries = corpus.flatMap((doc) => {
      const rules = (doc as { rules?: unknown }).rules;
      return Array.isArray(rules) ? rules.flatMap((r) => ((r as { actions?: unknown }).actions as unknown[] | undefined) ?? []) : [];
    });
    expect(entries.length).toBeGreaterThan(10);
    for (const { kind } of ACTIONS) {
      const v = ajv.getSchema(`${SCHEMA_ID}#/$defs/action_${kind}`);
      if (!v) throw new Error(`no schema for ${kind}`);
      fc.assert(
        fc.property(editedDocument(entries), (entry) => {
          expect(validateAction(kind, entry)).toEqual(errorsOf(v, entry));
        }),
        { numRuns: 100 },
      );
    }
  });
});

/** Plans that must not be applied are refused before any request, with one clear line. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/model/errors.js";
import { withDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { connection, makePlan, MIXED_RULES, runApply, tempDir } from "./helpers.js";

let sb: RunningSandbox;
let dir: string;
let plan: Plan;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 4 });
  dir = await tempDir();
  ({ plan } = await makePlan(sb, dir, MIXED_RULES));
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.clearRequests());

/** Writes a variant of the plan (re-signed unless `resign` is false) and applies it; returns the refusal. */
async function refusal(
  name: string,
  edit: (p: Record<string, unknown>) => void,
  resign = true,
  base = sb.baseUrl,
): Promise<string> {
  const signed = JSON.parse(JSON.stringify(withDigest(plan))) as Record<string, unknown>;
  edit(signed);
  const content = resign ? withDigest(signed as unknown as Plan) : signed;
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(content, null, 2));
  const err = await runApply({ baseUrl: base }, dir, { paths: [file], connection: connection({ baseUrl: base }) }).then(
    (code) => new Error(`applied with exit ${code}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UserError);
  expect(sb.requests()).toEqual([]);
  return (err as Error).message;
}

describe("apply refuses before any request", () => {
  it("a plan whose content does not match its digest (tampering)", async () => {
    const msg = await refusal(
      "tampered.json",
      (p) => {
        const changes = p.changes as Array<{
          request: { body: { actions?: Array<{ action_id: number; input_object: unknown }> } };
          after: Record<string, unknown>;
        }>;
        const step = changes.find((c) => Array.isArray(c.request.body.actions) && c.request.body.actions.length > 0);
        const first = step?.request.body.actions?.[0];
        // body and shown value edited alike (a body alone that disagrees with `after` is refused by its own check)
        if (step && first) {
          first.input_object = { inputValue: "something else" };
          step.after[`action ${first.action_id}`] = "something else";
        }
      },
      false,
    );
    expect(msg).toMatch(/does not match its digest .*edited after it was planned/);
  });

  it("a plan without a digest", async () => {
    const msg = await refusal("unsigned.json", (p) => delete p.digest, false);
    expect(msg).toMatch(/not a valid plan at \$\.digest/);
  });

  it("a plan for another base URL", async () => {
    const msg = await refusal("elsewhere.json", () => undefined, true, "http://127.0.0.1:9/api");
    expect(msg).toMatch(
      /planned against http:\/\/127\.0\.0\.1:\d+\/api, but the configured service is http:\/\/127\.0\.0\.1:9\/api/,
    );
  });

  it("the same base URL written differently is accepted (normalised)", async () => {
    const file = join(dir, "same.json");
    const upper = sb.baseUrl.replace("http://127.0.0.1", "HTTP://127.0.0.1") + "/";
    await writeFile(file, JSON.stringify(withDigest({ ...plan, base_url: upper })));
    const code = await runApply(sb, dir, { paths: [file] });
    expect(code).toBe(2);
  });

  it("a plan of another format_version", async () => {
    const msg = await refusal("v2.json", (p) => void (p.format_version = 2));
    expect(msg).toMatch(/format_version 2; this flowrules applies format_version 1 only/);
  });

  it("a plan that fails the schema, naming the JSON path", async () => {
    const msg = await refusal("bad.json", (p) => {
      const changes = p.changes as Array<Record<string, unknown>>;
      if (changes[2]) changes[2].instance_id = "100001";
    });
    expect(msg).toMatch(/not a valid plan at \$\.changes\[2\]\.instance_id: expected number/);
  });

  it("a change whose request does not say what its kind and step say", async () => {
    const msg = await refusal("mismatch.json", (p) => {
      const changes = p.changes as Array<{ kind: string; request: { body: Record<string, unknown> } }>;
      const c = changes.find((x) => x.kind === "complete_step");
      if (c) c.request.body.mode = "save";
    });
    expect(msg).toMatch(/\$\.changes\[\d+\]\.request\.body\.mode: a complete_step change is sent with mode "complete"/);
  });

  it("a plan that recorded planning errors", async () => {
    const msg = await refusal("failed.json", (p) => {
      p.errors = [
        {
          code: "limit",
          rule: "approve-expenses",
          message: 'rule "approve-expenses" matched 80 instances, above its limit of 50',
        },
      ];
    });
    expect(msg).toMatch(/records 1 planning error .*a plan that failed is not applied/);
  });

  it("a file that is not JSON, named .json", async () => {
    const file = join(dir, "broken.json");
    await writeFile(file, "{ not json");
    await expect(runApply(sb, dir, { paths: [file] })).rejects.toThrow(/broken\.json is not valid JSON/);
    expect(sb.requests()).toEqual([]);
  });

  it("rule paths without --auto-approve and without a terminal", async () => {
    const rules = join(dir, "rules.yaml");
    expect(await readFile(rules, "utf8")).toContain("approve-expenses");
    await expect(runApply(sb, dir, { paths: [rules] })).rejects.toThrow(
      /no terminal to confirm on.*--out plan\.json.*--auto-approve/,
    );
    expect(sb.requests()).toEqual([]);
  });
});

/** What `flowrules test` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { TEST_RESULT_FORMAT_NAMES } from "../../../render/format-names.js";
import { catalogSettings } from "../../settings.js";
import { Paths, Repeated, verbIO, verbRun } from "../run-verb.js";

const Flags = z.object({
  junit: z.string().optional(),
  requireTests: z.boolean().default(false),
  rule: Repeated,
  format: z.enum(TEST_RESULT_FORMAT_NAMES),
});

export const run = verbRun({
  name: "test",
  args: Paths,
  flags: Flags,
  start({ args: [paths], flags: { rule, ...flags }, raw, command, env }) {
    const { workflows } = catalogSettings(raw, env);
    return {
      io: verbIO(command),
      fields: { paths },
      exec: async (io) =>
        (await import("../../../commands/test.js")).testCommand({ paths, ...flags, rules: rule, workflows }, io),
    };
  },
});

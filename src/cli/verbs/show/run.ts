/** What `flowrules show` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { PLAN_FORMAT_NAMES } from "../../../render/format-names.js";
import { verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "show",
  args: z.tuple([z.string()]),
  flags: z.object({ format: z.enum(PLAN_FORMAT_NAMES) }),
  start: ({ args: [file], flags, command }) => ({
    io: verbIO(command),
    fields: { file },
    exec: async (io) => (await import("../../../commands/show.js")).showCommand({ file, ...flags }, io),
  }),
});

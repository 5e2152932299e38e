/** The connection flags of every verb that talks to the service (resolved in ./settings.ts; the key is env-only). */
import type { Command } from "commander";
import { CONNECTION_FLAGS, addOptions } from "./flags.js";

export function addConnectionOptions(cmd: Command): Command {
  return addOptions(cmd, CONNECTION_FLAGS);
}

/** The connection flags of every verb that talks to the service (resolved in settings.ts; the key is env-only). */
import type { Command } from "commander";
import type { Shard } from "../plan/shard.js";
import type { ConnectionSettings } from "../model/settings.js";
import { CONNECTION_FLAGS, addOptions, connectionFrom, sourcesOf } from "./settings.js";

export type { ConnectionSettings } from "../model/settings.js";

export function addConnectionOptions(cmd: Command): Command {
  return addOptions(cmd, CONNECTION_FLAGS);
}

/** Connection settings from flags, environment and the chosen profile (src/cli/settings.ts). */
export function connectionSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>, shard?: Shard): ConnectionSettings {
  return connectionFrom(sourcesOf(opts, env), shard);
}

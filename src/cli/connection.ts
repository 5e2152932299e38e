/** The connection flags of every verb that talks to the service (read by api/connection.ts; the key is env-only). */
import { Option, type Command } from "commander";

export { connectionSettings, type ConnectionSettings } from "../api/connection.js";

export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--base-url <url>", "service base URL, e.g. https://host/api (env FLOWRULES_BASE_URL)"))
    .addOption(
      new Option(
        "--rate-limit <n>",
        "the service's limit in requests a minute; the client sends at most 95 % of it in any 60 s, 0 = off (env FLOWRULES_RATE_LIMIT; default 100, shared by --shard workers)",
      ),
    )
    .addOption(new Option("--concurrency <n>", "requests in flight at most (default 4)"))
    .addOption(new Option("--timeout <ms>", "per-request timeout in milliseconds (default 30000)"))
    .addOption(new Option("--insecure-http", "allow plain http:// to a host that is not loopback"));
}


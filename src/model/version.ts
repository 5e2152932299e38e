import { readFileSync } from "node:fs";

/** The package version, read once from package.json (src/model/ and dist/model/ both sit two levels below it). */
export const VERSION: string = (() => {
  const raw: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return typeof raw === "object" && raw !== null && "version" in raw && typeof raw.version === "string"
    ? raw.version
    : "0.0.0";
})();

/** The flags that print it (commander's `.version()` in src/cli/program.ts; src/cli/index.ts answers them alone first). */
export const VERSION_FLAGS = ["-V", "--version"] as const;

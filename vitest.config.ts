import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// .ci/run sets VITEST_JSON_REPORT so it can print a plain "N passed, M failed" line from the JSON report.
const jsonReport = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  resolve: {
    // bench/ and scripts/ import flowrules as "#flowrules/<path>.js" (package.json "imports", built dist/ at run time);
    // tests run them against the TypeScript sources instead, like tsconfig.test.json's "source" condition.
    // "#yaml" is the installed yaml package, which the build bundles into one file for the CLI (scripts/vendor-yaml.mjs):
    // the sources are tested against the package itself, the built CLI (run as a child by many tests) against the bundle.
    alias: [
      { find: /^#flowrules\/(.*)\.js$/, replacement: `${fileURLToPath(new URL("./src/", import.meta.url))}$1.ts` },
      { find: /^#yaml$/, replacement: "yaml" },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // every test file removes what it made (test/helpers/temp.ts); a run that leaves anything in its temp dir fails
    setupFiles: ["test/helpers/setup.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    // Tests that need a service start their own sandbox on an ephemeral loopback port.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: jsonReport ? ["default", ["json", { outputFile: jsonReport }]] : ["default"],
  },
});

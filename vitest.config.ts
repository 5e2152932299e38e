import { defineConfig } from "vitest/config";

// .ci/run sets VITEST_JSON_REPORT so it can print a plain "N passed, M failed" line from the JSON report.
const jsonReport = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests that need a service start their own sandbox on an ephemeral loopback port.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: jsonReport ? ["default", ["json", { outputFile: jsonReport }]] : ["default"],
  },
});

#!/usr/bin/env node
/**
 * `npm run build` ends here: the installed `yaml` package, bundled into one ES module, dist/vendor/yaml.js, which the
 * built CLI loads through package.json "imports" (`#yaml`). Node loads the package as 72 CommonJS files, and resolving
 * them costs a completion Tab and `validate` about 20 ms of a budget counted in tens (docs/performance.md,
 * "Start-up"); one file loads in a third of the time. The code is the installed package's own, every export kept:
 * tests run the sources against the package itself (vitest.config.ts maps `#yaml` to `yaml`) and the built CLI
 * against this bundle, and test/cli/startup.test.ts checks the bundle is of the installed version.
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { build } from "esbuild-wasm";

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(require.resolve("yaml/package.json"), "utf8"));
// every export of the package, so that any `import { … } from "#yaml"` the sources add finds its name
const names = Object.keys(require("yaml")).filter((n) => n !== "default" && /^[A-Za-z_$][\w$]*$/.test(n));

await build({
  stdin: {
    contents: `export { ${names.join(", ")} } from "yaml";\n`,
    resolveDir: process.cwd(),
    sourcefile: "vendor-yaml-entry.js",
  },
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outfile: "dist/vendor/yaml.js",
  logLevel: "warning",
  legalComments: "inline",
  // the package's CommonJS files require("process"); an ES module has no require of its own
  banner: {
    js: [
      `/* yaml ${pkg.version} (${pkg.license}, https://github.com/eemeli/yaml), bundled from node_modules/yaml by scripts/vendor-yaml.mjs */`,
      'import { createRequire as __vendorRequire } from "node:module";',
      "const require = __vendorRequire(import.meta.url);",
    ].join("\n"),
  },
});

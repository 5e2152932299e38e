// ESLint (flat config): typescript-eslint's recommended rules, not the type-aware set, so `npm run lint` stays fast;
// tsc (strict, tsconfig.test.json) remains the type check. Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "dist-extra/**",
      "coverage/**",
      "test-output/**",
      "node_modules/**",
      "src/**/*.generated.ts",
      "schemas/**",
      "docs/**",
      "examples/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        // Node 20 globals the sources and scripts use (no browser code is linted: the HTML plan's script is a string)
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        URLSearchParams: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        clearImmediate: "readonly",
        queueMicrotask: "readonly",
        structuredClone: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        performance: "readonly",
        fetch: "readonly",
        Response: "readonly",
        Request: "readonly",
        Headers: "readonly",
        globalThis: "readonly",
      },
    },
    rules: {
      // a leading `_` marks a value left out on purpose: `const { digest: _digest, ...rest } = plan`
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // terminal escapes and control characters are what the output checks look for (`/\x1b\[/`, UNSAFE_CHARS)
      "no-control-regex": "off",
    },
  },
  {
    // the page script that the HTML benchmark runs inside the browser (page.evaluate)
    files: ["scripts/bench-html.mjs"],
    languageOptions: { globals: { document: "readonly", requestAnimationFrame: "readonly", Event: "readonly" } },
  },
);

/**
 * The `jsonata` library, loaded with `require`. It ships as one 300 KB CommonJS file; an ES `import` of it first
 * scans that file for its export names (Node's CommonJS lexer), ~55 ms of CPU on every `validate`, `plan` or `test`
 * — more than the library's own load (docs/performance.md, "Start-up"). `require` skips the scan; the function is
 * the same.
 */
import { createRequire } from "node:module";
import type jsonataFn from "jsonata";

export const jsonata = createRequire(import.meta.url)("jsonata") as typeof jsonataFn;

/** Completion scripts by shell: a new shell is a new module, one line here and its name in ../format-names.ts (`completion <shell>` follows). */
import { bashCompletion } from "./bash.js";
import { fishCompletion } from "./fish.js";
import type { CompletionRenderer } from "./types.js";
import { zshCompletion } from "./zsh.js";
import type { CompletionShell } from "../format-names.js";

export type { CompletionSpec, FlagSpec, ValueKind, VerbSpec } from "./types.js";

export const COMPLETION_SHELLS = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
} as const satisfies Record<CompletionShell, CompletionRenderer>;
export { COMPLETION_SHELL_NAMES, type CompletionShell } from "../format-names.js";

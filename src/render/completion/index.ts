/** Completion scripts by shell: a new shell is a new module and one line here (`completion <shell>` follows). */
import { bashCompletion } from "./bash.js";
import { fishCompletion } from "./fish.js";
import type { CompletionRenderer } from "./types.js";
import { zshCompletion } from "./zsh.js";

export type { CompletionSpec, FlagSpec, ValueKind, VerbSpec } from "./types.js";

export const COMPLETION_SHELLS = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
} as const satisfies Record<string, CompletionRenderer>;
export type CompletionShell = keyof typeof COMPLETION_SHELLS;
export const COMPLETION_SHELL_NAMES = Object.keys(COMPLETION_SHELLS) as CompletionShell[];

/** What a completion script knows about the CLI: read from the commander program (src/cli/completion.ts). */

/** How a flag's value is completed: fixed choices, a dynamic list from `flowrules __complete`, a path, or nothing. */
export type ValueKind =
  | { kind: "choices"; choices: string[] }
  | { kind: "dynamic"; list: "profiles" | "rules" }
  | { kind: "file" }
  | { kind: "dir" }
  | { kind: "none" };

export interface FlagSpec {
  /** "--format" */
  long?: string;
  /** "-q" */
  short?: string;
  description: string;
  /** undefined: a switch that takes no value */
  value?: ValueKind;
}

export interface VerbSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** the verb takes positional paths (files or folders) */
  paths: boolean;
  /** fixed choices of its first positional argument (completion bash|zsh|fish) */
  argChoices?: string[];
}

export interface CompletionSpec {
  program: string;
  /** flags accepted before or after any verb (--log-format, --help, --version) */
  globalFlags: FlagSpec[];
  verbs: VerbSpec[];
  /** the hidden verb the scripts call for profile and rule names */
  completeVerb: string;
}

export type CompletionRenderer = (spec: CompletionSpec) => string;

/** One short line for a description: the first clause, without characters the shells' quoting treats specially. */
export function shortText(s: string, max = 70): string {
  const first = s.split(/[;(]/)[0] ?? s;
  const plain = first
    .replace(/[`'"$\\[\]:]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}

export function flagNames(f: FlagSpec): string[] {
  return [f.long, f.short].filter((x): x is string => x !== undefined);
}

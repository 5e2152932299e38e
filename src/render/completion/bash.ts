/**
 * The bash completion script: verbs, each verb's flags (with the global ones), format and other choices, paths, and
 * profile and rule names from `flowrules __complete` at completion time (so they follow the files as they change).
 * Names and paths are data from files anyone may have written: they are read line by line into COMPREPLY and compared
 * with the word typed as text, never passed through `compgen -W` (which expands `$(…)` and backquotes) or an unquoted
 * `$(…)` (which splits and globs); paths are inserted quoted (`compopt -o filenames`). docs/safety.md.
 */
import { flagNames, type CompletionSpec, type FlagSpec } from "./types.js";

const words = (list: readonly string[]): string => list.join(" ");

function valueCase(verb: string, f: FlagSpec, fn: string): string | undefined {
  const v = f.value;
  if (!v || v.kind === "none") return undefined;
  const pattern = flagNames(f)
    .map((n) => `${verb}:${n}`)
    .join("|");
  const body =
    v.kind === "choices"
      ? `COMPREPLY=($(compgen -W "${words(v.choices)}" -- "$cur"))`
      : v.kind === "dynamic"
        ? `${fn}_names ${v.list}`
        : `${fn}_lines < <(compgen -${v.kind === "dir" ? "d" : "f"} -- "$cur"); compopt -o filenames 2>/dev/null`;
  return `      ${pattern}) ${body}; return 0 ;;`;
}

export function bashCompletion(spec: CompletionSpec): string {
  const fn = `_${spec.program.replace(/[^A-Za-z0-9_]/g, "_")}_complete`;
  const valueFlags = new Set<string>();
  for (const f of [...spec.globalFlags, ...spec.verbs.flatMap((v) => v.flags)])
    if (f.value) for (const n of flagNames(f)) valueFlags.add(n);
  const globals = spec.globalFlags.flatMap(flagNames);
  const cases: string[] = [];
  for (const f of spec.globalFlags) {
    const c = valueCase("*", f, fn);
    if (c) cases.push(c);
  }
  for (const v of spec.verbs)
    for (const f of v.flags) {
      const c = valueCase(v.name, f, fn);
      if (c) cases.push(c);
    }
  const flagCases = spec.verbs.map(
    (v) => `      ${v.name}) flags="${words([...v.flags.flatMap(flagNames), ...globals])}" ;;`,
  );
  const argCases = spec.verbs
    .filter((v) => v.argChoices)
    .map((v) => `      ${v.name}) COMPREPLY=($(compgen -W "${words(v.argChoices ?? [])}" -- "$cur")); return 0 ;;`);
  return `# bash completion for ${spec.program} (generated from its commands: ${spec.program} completion bash)
# Load it in the current shell:   source <(${spec.program} completion bash)
# or for every shell:              ${spec.program} completion bash > ~/.local/share/bash-completion/completions/${spec.program}
# one candidate per line of stdin, kept whole: file and profile names are data, never split, globbed or expanded
${fn}_lines() {
  local line
  COMPREPLY=()
  while IFS= read -r line; do COMPREPLY+=("$line"); done
}
# profile or rule names from "${spec.program} ${spec.completeVerb}" that start with the word typed (compared as text)
${fn}_names() {
  local name
  COMPREPLY=()
  while IFS= read -r name; do
    [[ "$name" == "$cur"* ]] && COMPREPLY+=("$name")
  done < <(${spec.program} ${spec.completeVerb} "$1" -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)
}
${fn}() {
  local cur prev verb word i flags
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  if [ "$COMP_CWORD" -gt 0 ]; then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  verb=""
  # the verb is the first word that is neither a flag nor a flag's value
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case " ${words([...valueFlags])} " in
      *" $word "*) i=$((i + 1)); continue ;;
    esac
    case "$word" in
      -*) ;;
      *) verb="$word"; break ;;
    esac
  done
  case "\${verb:-*}:$prev" in
${cases.join("\n")}
  esac
  if [ -z "$verb" ]; then
    if [[ "$cur" == -* ]]; then
      COMPREPLY=($(compgen -W "${words(globals)}" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "${words(spec.verbs.map((v) => v.name))}" -- "$cur"))
    fi
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    flags="${words(globals)}"
    case "$verb" in
${flagCases.join("\n")}
    esac
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return 0
  fi
  case "$verb" in
${argCases.join("\n") || "      '') ;;"}
  esac
  # paths (rule files and folders, plan files): bash's own file completion (-o default)
  COMPREPLY=()
  return 0
}
complete -o default -F ${fn} ${spec.program}
`;
}

/**
 * The zsh completion script: _arguments per verb, with descriptions; profile and rule names from `flowrules __complete`,
 * one a line, added as plain words (`compadd -a`: quoted when inserted, no `name:description` split), never evaluated
 * (docs/safety.md).
 */
import { shortText, type CompletionSpec, type FlagSpec } from "./types.js";

function action(f: FlagSpec, fn: string): string {
  const v = f.value;
  if (!v) return "";
  if (v.kind === "choices") return `:value:(${v.choices.join(" ")})`;
  if (v.kind === "dynamic") return `:${v.list}:${fn}_${v.list}`;
  if (v.kind === "file") return ":file:_files";
  if (v.kind === "dir") return ":folder:_files -/";
  return ":value: ";
}

/** One _arguments spec: `'(-q --quiet)'{-q,--quiet}'[no progress]'`, repeatable flags with `*`. */
function argSpec(f: FlagSpec, fn: string, repeatable: boolean): string {
  const desc = `[${shortText(f.description)}]${action(f, fn)}`;
  const star = repeatable ? "*" : "";
  if (f.long && f.short) return `'(${f.short} ${f.long})'{${f.short},${f.long}}'${desc}'`;
  return `'${star}${f.long ?? f.short ?? ""}${desc}'`;
}

export function zshCompletion(spec: CompletionSpec): string {
  const fn = `_${spec.program.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const repeatable = (f: FlagSpec): boolean => f.long === "--rule" || f.long === "--notify" || f.long === "--workflow";
  const globals = spec.globalFlags.map((f) => `    ${argSpec(f, fn, false)} \\`);
  const verbs = spec.verbs.map((v) => `    '${v.name}:${shortText(v.description)}'`);
  const perVerb = spec.verbs.map((v) => {
    const rest = v.argChoices ? `'1:${v.name}:(${v.argChoices.join(" ")})'` : v.paths ? "'*:path:_files'" : "";
    const lines = [
      ...v.flags.map((f) => argSpec(f, fn, repeatable(f))),
      ...spec.globalFlags.map((f) => argSpec(f, fn, false)),
      rest,
    ].filter(Boolean);
    return `        (${v.name})\n          _arguments -s \\\n            ${lines.join(" \\\n            ")}\n          ;;`;
  });
  return `#compdef ${spec.program}
# zsh completion for ${spec.program} (generated from its commands: ${spec.program} completion zsh)
# Load it in the current shell:   source <(${spec.program} completion zsh)
# or put it on your fpath:         ${spec.program} completion zsh > "\${fpath[1]}/_${spec.program}"

${fn}_profiles() {
  local -a names
  names=(\${(f)"$(${spec.program} ${spec.completeVerb} profiles -- \${words[1,CURRENT-1]} 2>/dev/null)"})
  _wanted profiles expl 'profile' compadd -a names
}

${fn}_rules() {
  local -a names
  names=(\${(f)"$(${spec.program} ${spec.completeVerb} rules -- \${words[1,CURRENT-1]} 2>/dev/null)"})
  _wanted rules expl 'rule' compadd -a names
}

${fn}() {
  local curcontext="$curcontext" state line
  typeset -A opt_args
  local -a verbs
  verbs=(
${verbs.join("\n")}
  )
  _arguments -C \\
${globals.join("\n")}
    '1: :->verb' \\
    '*:: :->args'
  case $state in
    (verb)
      _describe -t commands '${spec.program} verb' verbs
      ;;
    (args)
      curcontext="\${curcontext%:*:*}:${spec.program}-$line[1]:"
      case $line[1] in
${perVerb.join("\n")}
      esac
      ;;
  esac
}

if [ "$funcstack[1]" = "${fn}" ]; then
  ${fn} "$@"
else
  compdef ${fn} ${spec.program}
fi
`;
}

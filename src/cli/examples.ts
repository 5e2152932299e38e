/**
 * A short example per verb, shown after its `--help` and in docs/cli.md (scripts/docs/cli-reference.ts), so the two
 * never differ. Each example is a command line and what it does.
 */
import type { Command } from "commander";

export const EXAMPLES: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  validate: [
    ["flowrules validate", "check rules/ without any request"],
    ["flowrules validate rules/ --format github", "annotations for a GitHub Actions run"],
  ],
  plan: [
    ["flowrules plan --out plan.json", "dry-run diff of rules/, saved for `flowrules apply plan.json`"],
    ["flowrules plan --profile production --format markdown", "the plan against a profile's service, as a PR comment"],
    [
      "flowrules plan --changed-since origin/main --detailed-exitcode",
      "only the rules a branch edits; exit 2 when they change something",
    ],
    [
      "flowrules plan --at +7d",
      "a forecast: the plan as it would be in a week if nobody changed anything (apply refuses it)",
    ],
  ],
  forecast: [
    ["flowrules forecast --until +7d", "per rule, what time alone brings each day of the coming week"],
    [
      "flowrules forecast rules/ --until +48h --every 6h --format html > forecast.html",
      "the same every six hours, as a page with a chart per rule",
    ],
  ],
  apply: [
    ["flowrules apply plan.json", "execute exactly that reviewed plan"],
    ["flowrules apply rules/ --auto-approve --max-duration 14m", "plan and apply in one go, for a schedule"],
  ],
  revert: [
    [
      "flowrules revert plan.json --out undo.json",
      "a plan that sets back what plan.json's saves wrote, where the fields still hold it",
    ],
    [
      "flowrules revert --state /var/lib/flowrules --cycle 2026-12-01T09-00-00-000Z-41-3",
      "the same for one watcher cycle (`flowrules history` names them)",
    ],
  ],
  show: [["flowrules show plan.json --format html > plan.html", "a saved plan for review in the browser"]],
  test: [["flowrules test --junit results.xml", "the rule tests beside the rules, no network"]],
  explain: [["flowrules explain --instance 100008", "why each rule matches one live instance or not"]],
  workflows: [["flowrules workflows --profile staging", "the workflows a profile's key sees"]],
  describe: [["flowrules describe 'Expense claim'", "one workflow's steps and form fields"]],
  init: [["flowrules init rules --workflow 1042", "a starter rule and test file for one workflow"]],
  pull: [["flowrules pull", "write flowrules.workflows.json for the workflows the rules name"]],
  watch: [
    [
      "flowrules watch rules/ --state .flowrules/state --apply --metrics-port 9464",
      "approve within seconds, polling within 20 % of the key's rate limit",
    ],
    [
      "flowrules watch --profile prod --state /var/lib/flowrules",
      "only log what each cycle would do, against a profile's service",
    ],
  ],
  history: [
    [
      "flowrules history --state /var/lib/flowrules --last 3",
      "what the watcher's last three cycles changed, and how each change ended",
    ],
    [
      "flowrules history --state /var/lib/flowrules --format json",
      "the same as one JSON document (schemas/history.schema.json)",
    ],
  ],
  state: [
    [
      "flowrules state show --state .flowrules/state",
      "bookmarks, cached instances per workflow, and whether the state verifies with this key",
    ],
    [
      "flowrules state clear --state .flowrules/state",
      "remove the state: the next run reads everything (refused while a run or watcher uses it)",
    ],
  ],
  config: [
    [
      "flowrules config",
      "the profile, URL, key source, rate limit and config file in effect, each with where it came from",
    ],
    ["flowrules config --profile staging --check", "one request: do that profile's URL and key work?"],
  ],
  completion: [
    [
      "flowrules completion bash > ~/.local/share/bash-completion/completions/flowrules",
      "Tab completion of verbs, flags, rule and profile names",
    ],
  ],
  sandbox: [["flowrules sandbox --port 4010", "the simulated service at http://127.0.0.1:4010/api until Ctrl-C"]],
};

/** The examples of one verb as help text ("" when it has none). */
export function examplesText(verb: string): string {
  const list = EXAMPLES[verb] ?? [];
  if (list.length === 0) return "";
  return `\nExamples:\n${list.map(([line, what]) => `  # ${what}\n  $ ${line}`).join("\n")}\n`;
}

/** Adds each verb's examples after its help. */
export function addExamples(program: Command): void {
  for (const cmd of program.commands) {
    const text = examplesText(cmd.name());
    if (text) cmd.addHelpText("after", text);
  }
}

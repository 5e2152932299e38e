/**
 * Markdown of `plan --compare` for the pull-request comment (after Atlantis, as render/plan/markdown.ts): one line per
 * touched rule with its counts outside the collapsed block, the changes inside it as a diff, and the whole comment
 * under the 65,536-character limit, saying how much was left out and where the rest is.
 */
import { forecastLine, impactLine, impactSize } from "../../engine/impact.js";
import { serviceName } from "../../model/settings.js";
import { markdownCodeSafe, markdownSafe } from "../escape.js";
import { MARKDOWN_LIMIT } from "../plan/markdown.js";
import { planNames } from "../plan/names.js";
import type { CompareFormatter } from "./types.js";
import { changedTitle, changeIndex, changeTitle, differences, impactSummary, writes } from "./words.js";

const MAX_ERRORS = 50;

/** One line inside a ```diff block: no newline may break it, no fence may close it, no control shows. */
const line = (s: string): string => markdownCodeSafe(s).replace(/```/g, "'''");

const md = markdownSafe;

export const markdown: CompareFormatter = (plan, options) => {
  const limit = options.maxChars ?? MARKDOWN_LIMIT;
  const where = options.planFile
    ? `\`${options.planFile}\``
    : "the JSON plan (`flowrules plan --compare … --out plan.json`)";
  const head: string[] = [`## flowrules plan --compare \`${plan.compare.ref.replace(/`/g, "'")}\``, ""];
  // the contract's lead lines, verbatim (rule names are letters, digits, - _ .); a change touching thousands of rules
  // keeps half the comment for the details
  let leadChars = 0;
  for (const [n, i] of plan.impact.entries()) {
    const f = forecastLine(i);
    const l = `- ${impactLine(i)}${f ? `\n  - ${f}` : ""}`;
    if (leadChars + l.length > limit / 2) {
      head.push(`- … ${plan.impact.length - n} more touched rules in ${where}`);
      break;
    }
    head.push(l);
    leadChars += l.length + 1;
  }
  if (plan.impact.length > 0) head.push("");
  head.push(`**${impactSummary(plan)}**`, "");
  if (plan.errors.length > 0) {
    head.push(`**Errors (${plan.errors.length})**`, "");
    for (const e of plan.errors.slice(0, MAX_ERRORS)) head.push(`- ${md(e.message)}`);
    if (plan.errors.length > MAX_ERRORS) head.push(`- … ${plan.errors.length - MAX_ERRORS} more in ${where}`);
    head.push("");
  }
  const footer = `\n_Compared with ${plan.compare.commit.slice(0, 12)} and planned at ${md(plan.created_at)} against ${md(serviceName(plan.base_url, plan.profile))} by flowrules ${md(plan.flowrules_version)}._\n`;
  let out = `${head.join("\n")}\n`;
  const total = plan.impact.reduce((n, i) => n + impactSize(i), 0);
  if (total === 0) return out + footer;

  const budget = limit - out.length - footer.length - 1000;
  const working = changeIndex(plan);
  const names = planNames(plan);
  let body = "";
  let shown = 0;
  let full = false;
  for (const i of plan.impact) {
    const blocks: string[] = [
      ...i.added.map((ch) =>
        [`+ ${changeTitle(ch, names)}`, ...writes(ch, names).map((w) => `+     ${w}`)].map(line).join("\n"),
      ),
      ...i.removed.map((ch) =>
        [`- ${changeTitle(ch, names)}`, ...writes(ch, names).map((w) => `-     ${w}`)].map(line).join("\n"),
      ),
      // a rollout limit's moves between runs: wanted by both versions, a diff's context line (`  `), not + or -
      ...[...(i.deferred ?? []), ...(i.no_longer_deferred ?? [])].map((ch) =>
        line(
          `  ${changeTitle(ch, names)} (${i.deferred?.includes(ch) === true ? "deferred by the rollout limit" : "no longer deferred"})`,
        ),
      ),
      ...i.changed.map((w) =>
        [
          `! ${changedTitle(w, working(i.rule, w), i.rule, names)}`,
          ...differences(w, i.rule, names).flatMap((d) => [
            `-     ${d.key}: ${d.before}`,
            `+     ${d.key}: ${d.after}`,
          ]),
        ]
          .map(line)
          .join("\n"),
      ),
    ];
    if (blocks.length === 0) continue;
    const open = `#### \`${i.rule}\` (${i.status})\n\n\`\`\`diff\n`;
    if (body.length + open.length + 200 > budget) break;
    let section = open;
    for (const b of blocks) {
      if (body.length + section.length + b.length + 10 > budget) {
        full = true;
        break;
      }
      section += `${b}\n`;
      shown++;
    }
    body += `${section}\`\`\`\n\n`;
    if (full) break;
  }
  const left = total - shown;
  const note =
    left > 0
      ? `${left} of ${total} impact entries left out to stay under the ${limit.toLocaleString("en-US")}-character comment limit; all of them are in ${where}.\n`
      : "";
  out += `<details><summary>Impact (${total}) — + newly planned · - no longer planned · ! writes other values · unmarked: moved between runs by a rollout limit</summary>\n\n${body}${note}\n</details>\n`;
  return out + footer;
};

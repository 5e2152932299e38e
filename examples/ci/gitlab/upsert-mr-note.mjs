// Writes the flowrules plan as a merge request note, replacing the previous one (found by a hidden marker) so that
// each push updates one note instead of stacking them. Usage: node ci/upsert-mr-note.mjs plan.md EXIT_CODE
// Needs CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID (set by GitLab) and FLOWRULES_GITLAB_TOKEN.
import { readFile } from "node:fs/promises";

const MARKER = "<!-- flowrules-plan -->";
const [file = "plan.md", exitCode = "?"] = process.argv.slice(2);
const { CI_API_V4_URL: api, CI_PROJECT_ID: project, CI_MERGE_REQUEST_IID: mr, CI_JOB_URL: jobUrl, FLOWRULES_GITLAB_TOKEN: token } = process.env;
if (!api || !project || !mr || !token) {
  console.error("upsert-mr-note: not in a merge request pipeline, or FLOWRULES_GITLAB_TOKEN is not set; no note written");
  process.exit(0);
}

let plan = await readFile(file, "utf8").catch(() => "");
if (plan.trim() === "") plan = `## flowrules plan\n\n**The plan failed before it could be shown** (exit code ${exitCode}); see the job log.\n`;
// artifacts/file/ shows one file of the job's artifacts (they are there once the job ends, `when: always`)
const html = jobUrl ? `[plan.html](${jobUrl}/artifacts/file/plan.html)` : "`plan.html`";
const body = `${MARKER}\n${plan}\nEvery change, searchable, reports as charts: ${html}. Full JSON plan and reports: artifacts of [the plan job](${jobUrl ?? ""}).\n`;

const notes = `${api}/projects/${encodeURIComponent(project)}/merge_requests/${mr}/notes`;
const headers = { "PRIVATE-TOKEN": token, "Content-Type": "application/json" };

async function call(method, url, payload) {
  const res = await fetch(url, { method, headers, ...(payload ? { body: JSON.stringify(payload) } : {}) });
  if (!res.ok) throw new Error(`${method} ${url.replace(api, "")}: ${res.status} ${await res.text()}`);
  return res.json();
}

// newest first; our note is usually on the first page, but look through all of them
let previous;
for (let page = 1; !previous; page++) {
  const list = await call("GET", `${notes}?sort=desc&order_by=updated_at&per_page=100&page=${page}`);
  previous = list.find((n) => typeof n.body === "string" && n.body.startsWith(MARKER));
  if (list.length < 100) break;
}
if (previous) await call("PUT", `${notes}/${previous.id}`, { body });
else await call("POST", notes, { body });
console.log(previous ? `updated note ${previous.id}` : "created the plan note");

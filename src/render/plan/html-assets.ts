/**
 * The plan page's own style sheet and filter script (src/render/plan/html.ts renders the page): constants kept apart
 * from the rendering, so the page's Content-Security-Policy hashes exactly these two strings.
 */
import { MUTATING_KINDS } from "../../actions/index.js";
import { presentation } from "./summary.js";

/** The page's colour variables for the kinds' terminal colours. */
const COLOUR_VAR = { green: "ok", yellow: "warn", red: "bad", cyan: "info" } as const;

export const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--bar:#0969da;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--info:#0969da;--del:#ffebe9;--ins:#dafbe1;--badge:#fff8c5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--soft:#151b23;--bar:#4493f8;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--info:#4493f8;--del:#490202;--ins:#033a16;--badge:#4b3a00}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:16px 20px 48px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
a{color:var(--info)}
a:focus-visible,input:focus-visible,summary:focus-visible{outline:2px solid var(--info);outline-offset:2px}
.skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.summary{font-size:16px;font-weight:600;margin:4px 0}.meta{color:var(--muted);margin:0 0 8px}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}.count{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:120px;background:var(--soft)}
.count dt{color:var(--muted);font-size:12px}.count dd{margin:0;font-size:20px;font-weight:600}
${MUTATING_KINDS.map((k) => `.k-${k}{color:var(--${COLOUR_VAR[presentation(k).colour]})}`).join("")}
.failed,.count.failed dd{color:var(--bad)}.ok{color:var(--ok)}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}thead th{background:var(--soft)}
.num{text-align:right;font-variant-numeric:tabular-nums}.scroll{overflow-x:auto}
.errors{padding-left:20px}.where{color:var(--muted)}
.badge{display:inline-block;font-size:11px;line-height:16px;padding:0 6px;border-radius:8px;background:var(--badge);border:1px solid var(--warn);color:var(--fg);font-family:system-ui,sans-serif;vertical-align:1px}
.badge.err{background:var(--del);border-color:var(--bad)}
.side{display:flex;flex-wrap:wrap;gap:8px 32px;align-items:flex-start}.chart{display:block;max-width:100%;height:auto;margin:6px 0}.chart text{fill:var(--fg);font-size:12px}.chart rect{fill:var(--bar)}.chart .n{fill:var(--muted)}.chart .more{fill:var(--muted)}
.chart .bar:hover rect{opacity:.8}
.report{border:1px solid var(--line);border-radius:6px;padding:4px 14px 10px;margin:10px 0}
.filter{position:sticky;top:0;background:var(--bg);padding:8px 0;z-index:1;border-bottom:1px solid var(--line);display:flex;gap:8px;align-items:center;flex-wrap:wrap}
.filter input{font:inherit;padding:5px 8px;min-width:min(420px,100%);border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
.filter output{color:var(--muted)}
.rule-changes h3 .n{color:var(--muted);font-weight:400;font-size:13px}
.head,.chunk>li{display:grid;grid-template-columns:11rem 16rem 9rem minmax(0,1fr);gap:10px;padding:4px 6px}
.head{color:var(--muted);font-size:12px;border-bottom:1px solid var(--line)}
.chunk{list-style:none;margin:0;padding:0}.chunk.full{content-visibility:auto;contain-intrinsic-size:auto 4800px}
.chunk>li{border-bottom:1px solid var(--line)}.chunk>li:nth-child(even){background:var(--soft)}
.chunk>li>span:nth-child(2){overflow-wrap:anywhere}.chunk>li>span:nth-child(3),.chunk i{color:var(--muted);font-style:normal}
.chunk>li>span:nth-child(4){overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.chunk i{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.chunk b,.count b{font-weight:400}
del{background:var(--del);text-decoration:line-through;text-decoration-color:var(--muted)}ins{background:var(--ins);text-decoration:none}
@media (max-width:800px){.head{display:none}.chunk>li{grid-template-columns:1fr}}
footer{color:var(--muted);margin-top:32px;font-size:12px}
`;

/** The filter: only rows whose precomputed text contains every typed word stay shown; one pass per animation frame. */
export const SCRIPT = `(function(){"use strict";
var q=document.getElementById("q");if(!q)return;
var text=JSON.parse(document.getElementById("search-text").textContent);
var rows=document.querySelectorAll("[data-change-id]"),n=rows.length,shown=new Uint8Array(n).fill(1);
var chunks=Array.prototype.slice.call(document.querySelectorAll("#changes .chunk"));
var sections=Array.prototype.slice.call(document.querySelectorAll("#changes .rule-changes"));
var chunkEnd=[],sectionOf=[],at=0;
chunks.forEach(function(c){at+=c.children.length;chunkEnd.push(at);sectionOf.push(sections.indexOf(c.parentNode));});
var out=document.getElementById("shown"),total=n,frame=0,last="";
function apply(){frame=0;var v=q.value.toLowerCase().trim();if(v===last)return;last=v;
var terms=v.split(/\\s+/).filter(Boolean),visible=0,i=0,k,per=new Array(sections.length).fill(0);
for(var c=0;c<chunks.length;c++){var inChunk=0;for(;i<chunkEnd[c];i++){var s=text[i],ok=1;
for(k=0;k<terms.length;k++){if(s.indexOf(terms[k])<0){ok=0;break;}}
if(ok!==shown[i]){shown[i]=ok;rows[i].hidden=!ok;}inChunk+=ok;}
chunks[c].hidden=inChunk===0;visible+=inChunk;per[sectionOf[c]]+=inChunk;}
sections.forEach(function(sec,j){sec.hidden=per[j]===0;var h=sec.querySelector("h3 .n"),t=+h.getAttribute("data-total");
h.textContent=(terms.length?per[j]+" of ":"")+t+(t===1?" change":" changes");});
out.textContent=terms.length?visible+" of "+total+" changes shown":total+(total===1?" change":" changes");}
q.addEventListener("input",function(){if(!frame)frame=requestAnimationFrame(apply);});
document.addEventListener("keydown",function(e){if(e.key==="/"&&document.activeElement!==q&&!e.ctrlKey&&!e.metaKey&&!e.altKey){e.preventDefault();q.focus();}});
q.disabled=false;if(q.value)apply();})();`;

// `node bench/tools/alloc-summary.mjs alloc-profile.json`: the bytes allocated (garbage included) by function, and by
// the last five frames, largest first, from a profile ./alloc-profile.mjs wrote.
import { readFileSync } from "node:fs";

const profile = JSON.parse(readFileSync(process.argv[2] ?? "alloc-profile.json", "utf8"));
const self = new Map();
const stacks = new Map();
const add = (map, key, n) => map.set(key, (map.get(key) ?? 0) + n);
const walk = (node, path) => {
  const f = node.callFrame;
  const name = `${f.functionName || "(anonymous)"} ${f.url.replace(/.*\/dist\//, "")}:${f.lineNumber + 1}`;
  if (node.selfSize > 0) {
    add(self, name, node.selfSize);
    add(stacks, [name, ...path.slice(-4).reverse()].join(" < "), node.selfSize);
  }
  for (const child of node.children) walk(child, [...path, name]);
};
walk(profile.head, []);
const mb = (n) => (n / 1e6).toFixed(1).padStart(8);
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, 25);
console.log(`sampled: ${mb([...self.values()].reduce((a, b) => a + b, 0))} MB`);
for (const [k, v] of top(self)) console.log(`${mb(v)} ${k}`);
console.log("--- by the last five frames");
for (const [k, v] of top(stacks)) console.log(`${mb(v)} ${k}`);

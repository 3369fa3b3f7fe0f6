#!/usr/bin/env node
// Ranks a V8 CPU profile (`node --cpu-prof`) by self time, per module: a package under
// node_modules by its name, one of our files by its path in the repository, Node's own code as
// `node:…`, and V8's pseudo-frames ((garbage collector), (program), (idle)). Used to find what
// a warm `serve` spends its CPU on per Turn:
//
//   node --import tsx tools/bench/hotpath-worker.mjs \
//     '{"warmupTurns":100,"batchTurns":50,"batches":16,"serveNodeArgs":["--cpu-prof","--cpu-prof-dir=/tmp/p"]}'
//   node tools/bench/profile.mjs /tmp/p/*.cpuprofile [--skip-ms=5000] [--top=30] [--functions]
//
// `--skip-ms` leaves out the first milliseconds of samples (start-up and warm-up), `--functions`
// ranks functions (name, module, line) instead of modules; `--turns=N` also prints ms per Turn;
// `--inclusive` counts time anywhere on the stack; `--callers=NAME [--depth=N]` ranks the stacks
// above a function.
//
// V8's samples are timed by the wall clock: on a loaded machine a thread descheduled in a system
// call (stat, fsync, a socket write) is charged for the wait. For on-CPU time only, sample the
// serve with perf instead (serveNodeArgs ["--perf-basic-prof"], then `perf record -g -p PID` and
// `perf report --children --sort sym`): the JS frames show as `JS:*name file:line`.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { formatTable, repoRoot } from "./lib.mjs";

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const found = argv.find((arg) => arg.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
};
const files = argv.filter((arg) => !arg.startsWith("--"));
if (files.length === 0) {
  console.error("usage: node tools/bench/profile.mjs FILE.cpuprofile… [--skip-ms=N] [--top=N] [--functions] [--turns=N]");
  process.exit(2);
}
const skipMs = flag("skip-ms", 0);
const top = flag("top", 30);
const turns = flag("turns", 0);
const byFunction = argv.includes("--functions");
// `--callers=NAME`: for samples whose own function is NAME, the stacks above it (depth 6) ranked.
const depth = flag("depth", 6);
// `--inclusive`: time with the module (or function) anywhere on the stack, not only on top.
const inclusive = argv.includes("--inclusive");
const callersOf = argv.find((arg) => arg.startsWith("--callers="))?.slice("--callers=".length);

/** Per bundle chunk: the source path each line belongs to, from esbuild's `// path` comments. */
const chunkSources = new Map();
function bundledSource(path, line) {
  let starts = chunkSources.get(path);
  if (starts === undefined) {
    starts = [];
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((text, index) => {
        const match = /^\/\/ ((?:\.\.\/)*[\w@.-][^\s]*\.[cm]?[jt]sx?)$/.exec(text);
        if (match) starts.push([index, match[1]]);
      });
    chunkSources.set(path, starts);
  }
  let found;
  for (const [start, source] of starts) {
    if (start > line) break;
    found = source;
  }
  return found;
}

/** The module a frame's URL belongs to (a bundle chunk's frames: the source file esbuild bundled). */
function moduleOf(url, functionName, line) {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return url;
  let path = url.startsWith("file://") ? fileURLToPath(url) : url;
  if (path.includes("/dist/bundle/")) path = bundledSource(path, line) ?? path;
  const packageAt = path.lastIndexOf("/node_modules/");
  if (packageAt >= 0) {
    const parts = path.slice(packageAt + "/node_modules/".length).split("/");
    return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return path.startsWith("/") ? relative(repoRoot, path) : path.replace(/^(\.\.\/)+/, "");
}

const totals = new Map();
let sampledMs = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const frame = (node) => `${node.callFrame.functionName || "(anonymous)"} ${moduleOf(node.callFrame.url, node.callFrame.functionName, node.callFrame.lineNumber)}:${node.callFrame.lineNumber + 1}`;
  let at = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    const delta = (profile.timeDeltas[index] ?? 0) / 1000;
    at += delta;
    if (at < skipMs) continue;
    // A sample's time is the gap to the next one.
    const weight = (profile.timeDeltas[index + 1] ?? 0) / 1000;
    const node = nodes.get(profile.samples[index]);
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    const module = moduleOf(url, functionName, lineNumber);
    if (callersOf !== undefined) {
      if (functionName !== callersOf) continue;
      const stack = [];
      for (let parent = parents.get(node.id); parent && stack.length < depth; parent = parents.get(parent.id)) stack.push(frame(parent));
      const key = stack.join(" < ");
      totals.set(key, (totals.get(key) ?? 0) + weight);
      sampledMs += weight;
      continue;
    }
    if (inclusive) {
      const seen = new Set();
      for (let at = node; at; at = parents.get(at.id)) {
        const name = at.callFrame.functionName;
        const owner = moduleOf(at.callFrame.url, name, at.callFrame.lineNumber);
        const key = byFunction ? `${name || "(anonymous)"}  ${owner}:${at.callFrame.lineNumber + 1}` : owner;
        if (seen.has(key)) continue;
        seen.add(key);
        totals.set(key, (totals.get(key) ?? 0) + weight);
      }
      sampledMs += weight;
      continue;
    }
    const key = byFunction ? `${functionName || "(anonymous)"}  ${module}:${lineNumber + 1}` : module;
    totals.set(key, (totals.get(key) ?? 0) + weight);
    sampledMs += weight;
  }
}

const ranked = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
const header = [byFunction ? "function" : "module", "self ms", "share", ...(turns > 0 ? ["ms/Turn"] : [])];
console.log(
  formatTable(
    header,
    ranked.map(([key, value]) => [key, value.toFixed(1), `${((value / sampledMs) * 100).toFixed(1)} %`, ...(turns > 0 ? [(value / turns).toFixed(3)] : [])]),
  ),
);
console.log(`busy (non-idle) time sampled: ${sampledMs.toFixed(0)} ms${turns > 0 ? `, ${(sampledMs / turns).toFixed(2)} ms per Turn` : ""}`);

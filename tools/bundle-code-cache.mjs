// npm run build (spawned by tools/bundle.mjs once it has written local.cjs): the V8 code cache of
// the fast path's file, dist/bundle/local.cjs → dist/bundle/local.cjs.cache (bin/local-cache.js
// reads it; its header names this Node release, so another Node ignores it and compiles from
// source). tools/bundle.mjs runs it as its own process without NODE_OPTIONS: V8 accepts cached
// data only in a process whose V8 flags match the ones it was made with.
//
// The file is compiled with every function compiled eagerly (V8's --no-lazy, switched on for that
// compile alone, so the flags the data is stamped with are the defaults a command runs with): a
// command then finds the bytecode of whatever it calls in the cache, not only of the top level
// (measured on a warm-daemon `run "hello"`: ≈ 8 ms less client CPU; a top-level-only cache saved ≈ 2 ms).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const file = join(root, "dist", "bundle", "local.cjs");
const { CACHE_SUFFIX, compile, encodeCache } = createRequire(import.meta.url)(join(root, "bin", "local-cache.js"));
const cacheFile = `${file}${CACHE_SUFFIX}`;

const bytes = readFileSync(file);
setFlagsFromString("--no-lazy");
const script = compile(file, bytes.toString("utf8"), undefined);
setFlagsFromString("--lazy");
const data = script.createCachedData();
// Written whole, then renamed: a command never reads half a cache (and would ignore one: its header).
writeFileSync(`${cacheFile}.tmp`, encodeCache(bytes, data));
renameSync(`${cacheFile}.tmp`, cacheFile);
console.log(`bundle: dist/bundle/local.cjs${CACHE_SUFFIX} (${(data.length / 1024).toFixed(0)} KiB of V8 code cache for Node ${process.version})`);

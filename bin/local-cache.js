// The fast path's file, dist/bundle/local.cjs, compiled with a V8 code cache (Node 20 has no
// module.enableCompileCache). The build (tools/bundle-code-cache.mjs) compiles the file once with
// every function compiled eagerly and writes V8's cached data beside it, dist/bundle/local.cjs.cache:
// in the install folder, written only by the build, never a user-writable or shared place. A
// command then compiles the file with that data instead of parsing and compiling each function it
// calls (≈ 8 ms of a warm-daemon command's CPU).
//
// V8 checks little of cached data it is given (its own version, its flags and the source's length:
// a cache built for another file of the same length, or one with flipped bytes inside, would be
// accepted and run), so the file carries a header — the Node release and architecture it was made
// by, and SHA-256 digests of the function text wrapped around the source, of the source it was made
// from and of the data itself — and is used only when all of them match. A missing, stale or corrupt cache, or one V8 rejects, only means the file
// is compiled from its source as it would be without one.
"use strict";
const { isAscii } = require("node:buffer");
const { readFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const { pathToFileURL } = require("node:url");
const Module = require("node:module");
const vm = require("node:vm");

const CACHE_SUFFIX = ".cache";

/**
 * The function source the file is compiled as: Node's CommonJS wrapper, and `__zeDynamicImport`,
 * what the file's dynamic imports call (tools/bundle.mjs routes them to it): code compiled by
 * vm.Script has no import() of its own in Node 20. The cache is of exactly this text.
 */
const wrap = (source) => `(function (exports, require, module, __filename, __dirname, __zeDynamicImport) { ${source}\n});`;

const digest = (data) => require("node:crypto").createHash("sha256").update(data).digest("hex");

/**
 * The digest of the wrapper `wrap` puts around the file: V8 checks only the compiled text's length,
 * so data made under another wrapper of the same length (a bin/ updated while dist/ was not rebuilt)
 * would run the old wrapper's bytecode with the new wrapper's arguments.
 */
const wrapperDigest = () => digest(wrap(""));

/** The cache file's bytes for the source file's bytes `bytes`: one JSON header line, then V8's data. */
function encodeCache(bytes, data) {
  const header = { node: process.version, arch: process.arch, wrapper: wrapperDigest(), source: digest(bytes), data: digest(data), length: data.length };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), data]);
}

/** V8's data from `cacheFile` when its header matches the source file's bytes `bytes` and this Node, else undefined. */
function readCache(cacheFile, bytes) {
  let cache;
  try {
    cache = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  try {
    const end = cache.indexOf(10);
    if (end < 0) return undefined;
    const header = JSON.parse(cache.toString("utf8", 0, end));
    const data = cache.subarray(end + 1);
    if (header.node !== process.version || header.arch !== process.arch || header.length !== data.length) return undefined;
    if (header.wrapper !== wrapperDigest() || header.source !== digest(bytes) || header.data !== digest(data)) return undefined;
    return data;
  } catch {
    return undefined;
  }
}

/**
 * The file's text: an ASCII file (the build writes local.cjs and embedded.cjs so) decoded as
 * Latin-1, which is the same text and quicker to decode than UTF-8 (≈ 8 ms for embedded.cjs).
 */
const sourceText = (bytes) => bytes.toString(isAscii(bytes) ? "latin1" : "utf8");

/** `file`'s source compiled as a CommonJS module's function (with `cachedData` when given). */
function compile(file, source, cachedData) {
  return new vm.Script(wrap(source), { filename: file, cachedData });
}

/**
 * Loads `file` as Node's require() would (a module in require's cache, its own require, dynamic
 * import() resolved from the file), compiled with its code cache when that is usable. `compiled`
 * is for the build alone (tools/bundle-code-cache.mjs): given, no cache is read, and it hears each
 * file compiled (this one and those it loads) to make their caches from once they have run.
 */
function loadLocal(file, compiled) {
  const bytes = readFileSync(file);
  const script = compile(file, sourceText(bytes), compiled === undefined ? readCache(`${file}${CACHE_SUFFIX}`, bytes) : undefined);
  compiled?.(file, script, bytes);
  const directory = dirname(file);
  const loaded = new Module(file, module);
  loaded.filename = file;
  loaded.paths = Module._nodeModulePaths(directory);
  Module._cache[file] = loaded;
  // import() here is this ordinary module's: a path relative to the file made absolute, a package
  // or built-in resolved from bin/ (the same node_modules as from dist/bundle/). A file of the same
  // kind beside it (local.cjs's embedded.cjs) is loaded the same way, with its own code cache.
  const dynamicImport = (specifier) => {
    if (!/^\.\.?\//.test(specifier)) return import(specifier);
    const target = join(directory, specifier);
    if (!target.endsWith(".cjs")) return import(pathToFileURL(target).href);
    return new Promise((resolvePromise) => resolvePromise(Module._cache[target]?.exports ?? loadLocal(target, compiled)));
  };
  try {
    script.runInThisContext().call(loaded.exports, loaded.exports, Module.createRequire(file), loaded, file, directory, dynamicImport);
  } catch (error) {
    // As require() does: a file that failed to load is not left half-loaded in the cache.
    delete Module._cache[file];
    throw error;
  }
  loaded.loaded = true;
  return loaded.exports;
}

module.exports = { CACHE_SUFFIX, compile, encodeCache, loadLocal, readCache, sourceText };

// The single executable's main script (Node SEA, CommonJS; only Node's built-ins can be required
// here). The CLI is not run from inside the executable: its files (bin/, dist/, the production
// node_modules with libsql's and node-pty's native addons, the dashboard page, the precompiled
// config validator) travel as one SEA asset, `payload`, described by the `manifest` asset, and are
// extracted once to a versioned cache folder, ${XDG_CACHE_HOME:-~/.cache}/ze-harness/<version>-<hash16>/,
// then run from there by Node's ordinary loader (native addons must be files to be loaded).
//
// The executable also stands in for `node` when the CLI spawns itself (process.execPath is this
// executable): `<exe> /abs/file.js args…` runs that file (the daemon's `serve --register`), and
// `<exe> -e SOURCE [--] args…` evaluates SOURCE as CommonJS (the MCP stdio supervisor, the sandbox's
// proxy bridge). Neither form touches the cache.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const os = require("node:os");
const Module = require("node:module");
const vm = require("node:vm");

/** Evaluates `source` the way `node -e` does: CommonJS, require() from the cwd, argv after it. */
function evaluate(source, rest) {
  const args = rest[0] === "--" ? rest.slice(1) : rest;
  process.argv = [process.execPath, ...args];
  const filename = path.join(process.cwd(), "[eval]");
  const module = new Module(filename, null);
  module.filename = filename;
  module.paths = Module._nodeModulePaths(process.cwd());
  const wrapper = vm.runInThisContext(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename });
  wrapper.call(module.exports, module.exports, Module.createRequire(filename), module, filename, process.cwd());
}

/** Runs a script file the way `node file args…` does (CommonJS or ES module). */
function runFile(file, rest) {
  process.argv = [process.execPath, file, ...rest];
  Module.runMain(file);
}

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

/** A directory this user alone may change: ours, not a symlink, not group/world-writable. */
function checkPrivate(directory) {
  const stat = fs.lstatSync(directory);
  const uid = process.getuid ? process.getuid() : -1;
  if (!stat.isDirectory()) fail(`${directory} is not a directory`);
  if (uid !== -1 && stat.uid !== uid) fail(`${directory} belongs to another user; refusing to run code from it`);
  if ((stat.mode & 0o022) !== 0) fail(`${directory} is writable by others; refusing to run code from it (chmod 700 it)`);
}

/**
 * Every folder above the cache: one that another user may change (owned by someone other than
 * this user or root, or writable by others without the sticky bit, or by a group not ours) lets
 * them rename the private cache away after it was checked and put their own folder in its place.
 * Both the path as given and its real path (through any symlinks) are checked.
 */
function checkAncestors(directory) {
  const uid = process.getuid ? process.getuid() : -1;
  if (uid === -1) return;
  const gid = process.getgid();
  const chain = (start) => {
    const folders = [];
    for (let current = start; ; current = path.dirname(current)) {
      folders.push(current);
      if (path.dirname(current) === current) return folders;
    }
  };
  const real = fs.realpathSync(directory);
  for (const folder of new Set([...chain(path.dirname(directory)), ...chain(path.dirname(real))])) {
    const stat = fs.statSync(folder);
    const sticky = (stat.mode & 0o1000) !== 0;
    const foreignOwner = stat.uid !== uid && stat.uid !== 0;
    const othersWrite = (stat.mode & 0o002) !== 0 || ((stat.mode & 0o020) !== 0 && stat.gid !== gid);
    if (foreignOwner || (othersWrite && !sticky)) fail(`another user can change ${folder}; refusing to run code from below it (set XDG_CACHE_HOME to a folder of your own)`);
  }
}

function cacheBase() {
  const xdg = process.env.XDG_CACHE_HOME;
  const root = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache");
  return path.join(root, "ze-harness");
}

/** Writes every payload file into `directory` (a fresh private temporary folder). */
function unpack(directory, manifest) {
  const sea = require("node:sea");
  const payload = Buffer.from(sea.getAsset("payload"));
  for (const dir of manifest.directories) fs.mkdirSync(path.join(directory, dir), { recursive: true, mode: 0o700 });
  for (const [name, offset, size, mode] of manifest.files) {
    fs.writeFileSync(path.join(directory, name), payload.subarray(offset, offset + size), { mode });
  }
  for (const [name, target] of manifest.links) fs.symlinkSync(target, path.join(directory, name));
}

/** Removes what an extraction killed midway left (its temporary folder), after an hour. */
function pruneLeftovers(base) {
  const before = Date.now() - 3_600_000;
  for (const name of fs.readdirSync(base)) {
    if (!name.startsWith(".extract-")) continue;
    const folder = path.join(base, name);
    try {
      if (fs.lstatSync(folder).mtimeMs < before) fs.rmSync(folder, { recursive: true, force: true });
    } catch {
      // Another run removed it first.
    }
  }
}

/** The extracted package root for this build: found, or extracted now (atomically, race-safe). */
function extracted(manifest) {
  const base = cacheBase();
  fs.mkdirSync(base, { recursive: true, mode: 0o700 });
  checkAncestors(base);
  checkPrivate(base);
  const target = path.join(base, `${manifest.version}-${manifest.hash}`);
  if (fs.existsSync(target)) {
    checkPrivate(target);
    return target;
  }
  pruneLeftovers(base);
  const temporary = fs.mkdtempSync(path.join(base, `.extract-${manifest.version}-`));
  try {
    unpack(temporary, manifest);
    fs.chmodSync(temporary, 0o700);
    // A concurrent first run may have won the rename: its folder holds the same files.
    fs.renameSync(temporary, target);
  } catch (error) {
    fs.rmSync(temporary, { recursive: true, force: true });
    if (!fs.existsSync(target)) throw error;
  }
  checkPrivate(target);
  return target;
}

function main() {
  const args = process.argv.slice(2);
  if ((args[0] === "-e" || args[0] === "--eval") && args.length >= 2) return evaluate(args[1], args.slice(2));
  if (args[0] !== undefined && path.isAbsolute(args[0]) && /\.[cm]?js$/.test(args[0]) && fs.existsSync(args[0])) return runFile(args[0], args.slice(1));
  const sea = require("node:sea");
  const manifest = JSON.parse(sea.getAsset("manifest", "utf8"));
  let root;
  try {
    root = extracted(manifest);
  } catch (error) {
    fail(`cannot extract Ze Harness to ${cacheBase()}: ${error instanceof Error ? error.message : String(error)}`);
  }
  runFile(path.join(root, "bin", "ze-harness.js"), args);
}

main();

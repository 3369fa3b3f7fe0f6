// What the single executable carries (tools/binary/build.mjs): the files the CLI needs at run time,
// and nothing else. From the package: package.json, bin/, the modules the CLI runs from dist/
// (modulesFrom below), dist/'s assets and the two generated documents the host serves. From node_modules: only
// the packages the built JavaScript names (import, require, createRequire, require.resolve) and
// their dependencies, found the way Node resolves them; inside them no source maps,
// declarations, TypeScript sources, Markdown, .bin links, other platforms' prebuilt addons or
// node-pty's build inputs (its loaded addon is build/Release/pty.node).
import { builtinModules } from "node:module";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";

const BUILTINS = new Set(builtinModules);
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\d*\s*\(\s*|\brequire\d*\.resolve\s*\(\s*|\)\s*\(\s*|\bimport\s+)["']([^"'.\/][^"']*)["']/g;
const PLATFORM = `${process.platform}-${process.arch}`;

/** A package name from a bare specifier (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier) {
  if (specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  return BUILTINS.has(name) ? undefined : name;
}

function walk(directory, visit) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) walk(path, visit);
    else visit(path, entry);
  }
}

/** Bare package names the given JavaScript files load. */
function namedPackages(paths) {
  const names = new Set();
  for (const path of paths) {
    if (!/\.[cm]?js$/.test(path)) continue;
    for (const match of readFileSync(path, "utf8").matchAll(SPECIFIER)) {
      const name = packageName(match[1]);
      if (name !== undefined) names.add(name);
    }
  }
  return names;
}

function walkFiles(directory) {
  const files = [];
  walk(directory, (path) => files.push(path));
  return files;
}

/**
 * The CLI's own modules: the bundle (every chunk: loaded by dynamic import), the plugin contract
 * (plugins' `ze-harness/plugin` resolves to it) and oclif's help class with the modules it imports.
 * tsc's other output (the SDK's and the exports' modules) is not run by the CLI.
 */
const DIST_ENTRIES = ["dist/bundle", "dist/plugin", "dist/cli/help.js", "dist/cli/root-help.txt"];
const RELATIVE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

function modulesFrom(root, entries) {
  const found = new Set();
  const queue = entries.flatMap((entry) => {
    const path = join(root, entry);
    return lstatSync(path).isDirectory() ? walkFiles(path) : [path];
  });
  while (queue.length > 0) {
    const path = queue.pop();
    if (found.has(path) || /\.(map|d\.ts)$/.test(path)) continue;
    found.add(path);
    if (!/\.[cm]?js$/.test(path)) continue;
    for (const match of readFileSync(path, "utf8").matchAll(RELATIVE)) {
      // Bundled packages' comments and strings can look like imports: only real files count.
      const target = join(dirname(path), match[1]);
      if (existsSync(target) && lstatSync(target).isFile()) queue.push(target);
    }
  }
  return [...found].sort();
}

/** Node's lookup: `name` from the package folder `from`, walking up its node_modules folders. */
function resolvePackage(root, from, name) {
  for (let current = from; ; current = dirname(current)) {
    if (basename(current) !== "node_modules") {
      const candidate = join(current, "node_modules", name);
      if (existsSync(join(candidate, "package.json"))) return candidate;
    }
    if (current === root || dirname(current) === current) return undefined;
  }
}

const GLIBC = process.report?.getReport().header.glibcVersionRuntime !== undefined;

/** Whether an optional (platform) package is for this machine: os, cpu and C library. */
function fitsHost(manifest) {
  const fits = (list, value) => !Array.isArray(list) || list.includes(value);
  const libc = manifest.libc ?? (/musl/.test(manifest.name) ? ["musl"] : undefined);
  return fits(manifest.os, process.platform) && fits(manifest.cpu, process.arch) && fits(libc, GLIBC ? "glibc" : "musl");
}

/**
 * Package folders (absolute) the named packages need, dependencies included (optional ones only
 * for this platform: the executable is built per platform).
 */
export function runtimePackages(root, seeds) {
  // Peer dependencies are not followed: the packages that use them name them (and are seeds).
  const found = new Set();
  const queue = [];
  const add = (from, name) => {
    const folder = resolvePackage(root, from, name);
    if (folder === undefined || found.has(folder)) return;
    found.add(folder);
    queue.push(folder);
  };
  for (const name of seeds) add(root, name);
  while (queue.length > 0) {
    const folder = queue.pop();
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
    for (const name of Object.keys(manifest.dependencies ?? {})) add(folder, name);
    for (const name of Object.keys(manifest.optionalDependencies ?? {})) {
      const optional = resolvePackage(root, folder, name);
      if (optional !== undefined && fitsHost(JSON.parse(readFileSync(join(optional, "package.json"), "utf8")))) add(folder, name);
    }
  }
  return [...found].sort();
}

/** Whether a file inside node_modules is left out (`path` relative to the package folder). */
function dropped(packageFolder, path) {
  if (/\.(map|d\.ts|d\.mts|d\.cts|ts|tsx|mts|cts|md|markdown)$|\.(test|spec)\.[cm]?js$/i.test(path)) return true;
  const parts = path.split(sep);
  if (parts.includes(".bin")) return true;
  const prebuilds = parts.indexOf("prebuilds");
  if (prebuilds !== -1 && parts[prebuilds + 1] !== undefined && !parts[prebuilds + 1].startsWith(PLATFORM)) return true;
  if (packageFolder.endsWith(`${sep}node-pty`)) {
    if (parts[0] === "build") return !(parts.length === 1 || (parts[1] === "Release" && (parts.length === 2 || path.endsWith(".node"))));
    return ["deps", "src", "third_party", "scripts", "typings", "node-addon-api", "prebuilds", "binding.gyp"].includes(parts[0]);
  }
  return false;
}

/**
 * Every payload entry, relative to the package root: files (with their mode), symlinks, folders.
 */
export function payloadEntries(root) {
  const files = [];
  const links = [];
  const add = (path) => {
    const stat = lstatSync(path);
    const name = relative(root, path);
    if (stat.isSymbolicLink()) links.push([name, readlinkSync(path)]);
    else files.push([name, stat.mode & 0o777]);
  };
  add(join(root, "package.json"));
  walk(join(root, "bin"), (path) => add(path));
  const javascript = [...walkFiles(join(root, "bin")), ...modulesFrom(root, DIST_ENTRIES)];
  for (const path of javascript) add(path);
  for (const entry of readdirSync(join(root, "dist"), { withFileTypes: true })) if (entry.isFile()) add(join(root, "dist", entry.name));
  for (const name of ["generated/openapi.json", "generated/config.schema.json"]) add(join(root, name));
  const seeds = namedPackages(javascript);
  const packages = runtimePackages(root, seeds);
  for (const folder of packages) {
    const visit = (directory) => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        const path = join(directory, entry.name);
        // Nested node_modules are packages of their own, taken only when resolved above.
        if (entry.isDirectory() && entry.name === "node_modules") continue;
        if (dropped(folder, relative(folder, path))) continue;
        if (entry.isDirectory()) visit(path);
        else add(path);
      }
    };
    visit(folder);
  }
  const directories = [...new Set([...files, ...links].map(([name]) => dirname(name)))].sort();
  return { files, links, directories, packages: packages.map((folder) => relative(root, folder)) };
}

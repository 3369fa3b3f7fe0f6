// Where host plugins come from: the config layers' `plugins` entries, merged by source (a later
// layer's declaration of a source replaces the earlier one in place; `enabled: false` removes
// it), each resolved to a module: a local path (`./`, `../`, `/`) from the declaring config
// file's directory, or an exact npm package name from the project directory's node_modules. A
// module is imported once per content digest, so a reload picks up a changed file and reuses
// an unchanged one. The legacy core-tools package is ignored (its tools are built in), except
// that an entry giving it options fails closed.
import { PluginSourceError } from "./source-error.js";
import { PLUGIN_CONTRACT_SPECIFIERS, registerPluginContractAlias } from "./alias.js";
import { createHash } from "node:crypto";
import { readFile, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import type { JsonObject } from "../../plugin/index.js";
import type { PluginCandidate } from "./activate.js";
import { isLocalPluginSource, pluginSource } from "../config/normalize.js";
import type { PluginDeclaration } from "../config/types.js";
import { isRecord } from "./checks.js";

/** The package the standard tools once shipped in (reference, server-node). */
export const LEGACY_CORE_TOOLS_PACKAGE = "@zephyrcloudio/harness-plugin-core-tools";

/** One plugin to load, after the layers merged. */
export interface PluginEntry {
  /** An absolute path or an npm package name, as reported in `RuntimePlugin.source`. */
  readonly source: string;
  /** `context.options` (`{}` when none are set). */
  readonly options: JsonObject;
  /** The config file that declared it last. */
  readonly file?: string | undefined;
}

/** The part of a config layer this module reads (services/config's `ConfigLayer` fits). */
export interface PluginConfigLayer {
  readonly file: string;
  readonly config: { readonly plugins?: readonly PluginDeclaration[] | undefined };
}

/** The layers' effective plugin entries, in declaration order. */
export function pluginEntriesFromLayers(layers: readonly PluginConfigLayer[]): PluginEntry[] {
  const merged: PluginEntry[] = [];
  for (const layer of layers) {
    for (const declaration of layer.config.plugins ?? []) {
      const declared = pluginSource(declaration);
      // services/config already made local sources absolute; resolving again is a no-op then, and makes programmatic layers work.
      const source = isLocalPluginSource(declared) ? resolve(dirname(layer.file), declared) : declared;
      const index = merged.findIndex((entry) => entry.source === source);
      if (typeof declaration !== "string" && declaration.enabled === false) {
        if (index >= 0) merged.splice(index, 1);
        continue;
      }
      const options = typeof declaration === "string" ? {} : ((declaration.options ?? {}) as JsonObject);
      const entry: PluginEntry = { source, options: structuredClone(options), file: layer.file };
      if (index >= 0) merged[index] = entry;
      else merged.push(entry);
    }
  }
  return merged;
}

/** What a source resolved to. */
export interface ResolvedModule {
  /** The module file, canonical. */
  readonly path: string;
  /** SHA-256 (hex) of the file's bytes: the artifact identity of this load. */
  readonly digest: string;
  /** The npm package's version, for a package source. */
  readonly packageVersion?: string;
}

// PluginSourceError lives in source-error.ts: hosts without a module loader (the Worker) use it
// without this module's file-path imports.
export { PluginSourceError } from "./source-error.js";

const NPM_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/;

/** Whether `name` is an exact npm package name (no version range, no subpath). */
export const isPackageName = (name: string): boolean => name.length <= 214 && NPM_NAME.test(name);

async function fileDigest(path: string): Promise<string> {
  return createHash("sha256").update(await readFile(path)).digest("hex");
}

async function resolveFile(path: string): Promise<ResolvedModule> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new PluginSourceError(`Plugin file ${path} does not exist.`);
  if (!info.isFile()) throw new PluginSourceError(`Plugin source ${path} is not a file.`);
  const canonical = await realpath(path);
  return { path: canonical, digest: await fileDigest(canonical) };
}

/** The entry file `exports` (or `main`) names, conditions import → node → default. */
function packageEntry(manifest: Record<string, unknown>): string | undefined {
  const pick = (target: unknown): string | undefined => {
    if (typeof target === "string") return target;
    if (Array.isArray(target)) {
      for (const item of target) {
        const found = pick(item);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (isRecord(target)) {
      for (const [condition, value] of Object.entries(target)) {
        if (condition === "import" || condition === "node" || condition === "default") {
          const found = pick(value);
          if (found !== undefined) return found;
        }
      }
    }
    return undefined;
  };
  const exports = manifest["exports"];
  if (exports !== undefined) {
    const root = isRecord(exports) && Object.keys(exports).some((key) => key.startsWith(".")) ? exports["."] : exports;
    return pick(root);
  }
  return typeof manifest["main"] === "string" ? manifest["main"] : "index.js";
}

/** The package installed at `root` (its package.json names the entry): the entry file, its digest and the version. */
export async function resolvePackageRoot(root: string, name: string): Promise<ResolvedModule> {
  const text = await readFile(join(root, "package.json"), "utf8").catch(() => undefined);
  if (text === undefined) throw new PluginSourceError(`Plugin package ${name} has no package.json.`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new PluginSourceError(`Plugin package ${name} has an unreadable package.json.`);
  }
  if (!isRecord(manifest)) throw new PluginSourceError(`Plugin package ${name} has an unreadable package.json.`);
  const entry = packageEntry(manifest);
  if (entry === undefined) throw new PluginSourceError(`Plugin package ${name} exports no importable entry point.`);
  const target = resolve(root, entry);
  const canonicalRoot = await realpath(root);
  const resolved = await resolveFile(target).catch(() => {
    throw new PluginSourceError(`Plugin package ${name} names an entry point that does not exist.`);
  });
  if (resolved.path !== canonicalRoot && !resolved.path.startsWith(canonicalRoot + sep)) throw new PluginSourceError(`Plugin package ${name} names an entry point outside the package.`);
  const version = typeof manifest["version"] === "string" ? manifest["version"] : undefined;
  return { ...resolved, ...(version !== undefined ? { packageVersion: version } : {}) };
}

async function resolvePackage(name: string, projectDirectory: string): Promise<ResolvedModule> {
  if (!isPackageName(name)) throw new PluginSourceError(`Plugin source ${JSON.stringify(name)} is neither a local path (./, ../ or /) nor an exact npm package name.`);
  for (let directory = resolve(projectDirectory); ; directory = dirname(directory)) {
    const root = join(directory, "node_modules", ...name.split("/"));
    if ((await stat(join(root, "package.json")).catch(() => undefined)) !== undefined) return resolvePackageRoot(root, name);
    if (dirname(directory) === directory) break;
  }
  throw new PluginSourceError(`Plugin package ${name} is not installed (searched node_modules from ${projectDirectory} upwards).`);
}

/** Resolves a config source (an absolute path, or a package name searched from `projectDirectory`). */
export function resolvePluginSource(source: string, projectDirectory: string): Promise<ResolvedModule> {
  if (isLocalPluginSource(source) || isAbsolute(source)) return resolveFile(resolve(projectDirectory, source));
  return resolvePackage(source, projectDirectory);
}

/**
 * The module's default export. The URL carries the content digest, so the module system loads a
 * changed file anew and an unchanged one from its cache. Rejects with whatever the import threw.
 */
export async function importPluginModule(resolved: ResolvedModule): Promise<unknown> {
  // Module hooks run on a loader thread in Node 20 (tens of ms to start): register them only for
  // a module that names the contract.
  if (await namesPluginContract(resolved.path)) registerPluginContractAlias();
  const url = `${pathToFileURL(resolved.path).href}?ze-harness-sha256=${resolved.digest}`;
  const namespace = (await import(url)) as { default?: unknown };
  return namespace.default;
}

async function namesPluginContract(path: string): Promise<boolean> {
  const text = await readFile(path, "utf8").catch(() => "");
  return PLUGIN_CONTRACT_SPECIFIERS.some((specifier) => text.includes(specifier));
}

/** Whether an entry is the legacy core-tools package; `fails` when it gives options. */
export function legacyCoreTools(entry: PluginEntry): "no" | "ignored" | "fails" {
  if (entry.source !== LEGACY_CORE_TOOLS_PACKAGE) return "no";
  return Object.keys(entry.options).length > 0 ? "fails" : "ignored";
}

/**
 * The candidates of config entries: each resolves and imports its module when activated (a
 * package from `projectDirectory`); the legacy core-tools entry is left out, or fails closed
 * when it gives options.
 */
export function configCandidates(entries: readonly PluginEntry[], projectDirectory: string): PluginCandidate[] {
  const candidates: PluginCandidate[] = [];
  for (const entry of entries) {
    const legacy = legacyCoreTools(entry);
    if (legacy === "ignored") continue;
    candidates.push({
      source: entry.source,
      options: entry.options,
      load: async () => {
        if (legacy === "fails") {
          throw new PluginSourceError(`${LEGACY_CORE_TOOLS_PACKAGE} takes no options: the standard tools are built in; restrict them with deny permission rules.`, true);
        }
        const resolved = await resolvePluginSource(entry.source, projectDirectory);
        return { value: await importPluginModule(resolved), ...(resolved.packageVersion !== undefined ? { packageVersion: resolved.packageVersion } : {}) };
      },
    });
  }
  return candidates;
}

/** A candidate for a plugin object handed over in code (the SDK's inline plugins). */
export function inlineCandidate(plugin: unknown, options: { readonly source?: string; readonly options?: JsonObject } = {}): PluginCandidate {
  const id = typeof plugin === "object" && plugin !== null && typeof (plugin as { id?: unknown }).id === "string" ? (plugin as { id: string }).id : "plugin";
  return { source: options.source ?? `inline:${id}`, options: options.options ?? {}, load: async () => ({ value: plugin }) };
}

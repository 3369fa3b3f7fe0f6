// Session plugin sources on the Node host (reference, "Session plugin sources"): a source is
// resolved to an exact artifact before its revision is recorded, and every later activation
// (a retry, a restart, a host reload) loads exactly that artifact or fails; only a refresh
// resolves the source again.
//
// - `File` (`file:` URL or absolute path): the file's SHA-256 pins it (`integrity` `sha256:<hex>`,
//   `version` `file-sha256:<hex>` unless declared). The module loads from its own location, so
//   its imports resolve as written; a changed file fails activation until refreshed.
// - `Package`: installed from the npm registry (npm-source.ts) into the artifact cache at an exact
//   `version` (the requested version or dist-tag, else `latest`) with the registry's `integrity`
//   (`sha512-…`), verified before anything is written; no package script ever runs.
// - `Git`: cloned over HTTP(S) (git-source.ts) and checked out at an exact commit (the `ref`: a
//   full commit, a branch or a tag; the default branch without one): `version`
//   `git-sha1:<commit>` unless declared, `integrity` `git-sha1:<commit>`.
// - `Static`: a plugin the embedding host registered under that id.
// - `Bundle` is an unsupported capability here (503).
// Installed artifacts live in the cache until no recorded desired or active revision references
// them (`artifactCacheEntry`); a freed one is installed and verified again when loaded.
import { createHash } from "node:crypto";
import { readFile, realpath, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionPluginResolution, SessionPluginSource } from "../../generated/client/types.gen.js";
import { conflict, unavailable, validationFailure } from "../contract/failure.js";
import { ArtifactCache } from "./artifact-cache.js";
import type { SessionPluginArtifactOptions } from "./artifact-options.js";
import { checkGitUrl, gitCacheKey, installGitCommit, resolveGitSource } from "./git-source.js";
import { DEFAULT_NPM_REGISTRY, installNpmPackage, registryFrom, npmCacheKey, resolveNpmPackage, type NpmResolution, type RegistryOptions } from "./npm-source.js";
import { importPluginModule, isPackageName, resolvePackageRoot, resolvePluginSource, PluginSourceError, type ResolvedModule } from "./source.js";

/** A plugin the embedding host links in, addressed by a `Static` source id. */
export interface StaticSessionPlugin {
  readonly pluginId: string;
  readonly version: string;
  readonly plugin: unknown;
}

/** What a source resolved to: the recorded resolution and the artifact a later load must match. */
export interface ResolvedArtifact {
  readonly resolved: { readonly pluginId: string; readonly version: string; readonly integrity?: string };
  /** Stored with the revision (JSON): how to load and verify it again. */
  readonly artifact: ArtifactRecord;
}

export type ArtifactRecord =
  | { readonly kind: "file"; readonly path: string; readonly digest: string }
  /** A package found installed in node_modules (revisions recorded before registry installs). */
  | { readonly kind: "package"; readonly name: string; readonly version: string; readonly digest: string }
  | { readonly kind: "npm"; readonly name: string; readonly version: string; readonly integrity: string; readonly tarball: string; readonly digest: string }
  | { readonly kind: "git"; readonly url: string; readonly commit: string; readonly digest: string }
  | { readonly kind: "static"; readonly id: string; readonly version: string };

/** Where `Package` and `Git` sources are installed from and to (the SDK's `sessionPluginArtifacts`). */
export interface ArtifactSettings {
  readonly cache: ArtifactCache;
  /** The npm registry (see npm-source.ts `registryFrom`). */
  readonly registry: string;
  readonly resolveTimeoutMs?: number | undefined;
  readonly installTimeoutMs?: number | undefined;
}

export interface SourceContext {
  readonly projectDirectory: string;
  readonly staticPlugins?: ReadonlyMap<string, StaticSessionPlugin> | undefined;
  /** Default: the cache `ze-harness-plugin-artifacts` under the OS temporary directory, the public registry. */
  readonly artifacts?: ArtifactSettings | undefined;
}

/** The settings a host uses: the options over the environment, the cache under `stateDirectory`. */
export function artifactSettingsFrom(options: SessionPluginArtifactOptions | undefined, env: Readonly<Record<string, string | undefined>>, stateDirectory: string): ArtifactSettings {
  return {
    cache: new ArtifactCache(options?.cacheDirectory ?? join(stateDirectory, "plugin-artifacts")),
    registry: registryFrom(options?.packageManager?.registry, env),
    resolveTimeoutMs: options?.resolveTimeoutMs,
    installTimeoutMs: options?.installTimeoutMs,
  };
}

/** The reference's default cache directory (a host passes its own, under its data directory). */
export const defaultArtifactSettings = (): ArtifactSettings => ({ cache: new ArtifactCache(join(tmpdir(), "ze-harness-plugin-artifacts")), registry: DEFAULT_NPM_REGISTRY });

const settingsOf = (context: SourceContext): ArtifactSettings => context.artifacts ?? defaultArtifactSettings();
const registryOptions = (settings: ArtifactSettings): RegistryOptions => ({ registry: settings.registry, resolveTimeoutMs: settings.resolveTimeoutMs, installTimeoutMs: settings.installTimeoutMs });

/** The cache entry (`<kind>/<key>`) an artifact record keeps in use, if it has one. */
export function artifactCacheEntry(artifact: ArtifactRecord): string | undefined {
  if (artifact.kind === "npm") return `npm/${npmCacheKey(artifact)}`;
  if (artifact.kind === "git") return `git/${gitCacheKey(artifact.url, artifact.commit)}`;
  return undefined;
}

/** The installed entry of an npm artifact (installing and verifying it again when it was freed). */
async function npmModule(resolution: NpmResolution, settings: ArtifactSettings): Promise<ResolvedModule> {
  const directory = await installNpmPackage(resolution, settings.cache, registryOptions(settings));
  return resolvePackageRoot(join(directory, "package"), resolution.name);
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

function filePath(uri: string): string {
  if (uri.startsWith("file:")) {
    try {
      return fileURLToPath(uri);
    } catch {
      throw validationFailure(`File plugin source ${JSON.stringify(uri)} is not a valid file: URL.`);
    }
  }
  if (!isAbsolute(uri)) throw validationFailure(`File plugin source ${JSON.stringify(uri)} must be a file: URL or an absolute path.`);
  return uri;
}

async function digestOfFile(path: string): Promise<{ path: string; digest: string }> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new PluginSourceError(`Plugin file ${path} does not exist or is not a file.`);
  const canonical = await realpath(path);
  return { path: canonical, digest: sha256(await readFile(canonical)) };
}

function checkDeclared(declared: SessionPluginResolution, actual: { version: string; integrity?: string }): void {
  if (declared.integrity !== undefined && declared.integrity !== actual.integrity) {
    throw conflict(`declared_mismatch: the source resolved to integrity ${actual.integrity ?? "(none)"}, not the declared ${declared.integrity}.`);
  }
}

/** Resolves a source for a new revision (or a refresh). Typed failures: 400, 409 `declared_mismatch`, 503. */
export async function resolveSessionSource(source: SessionPluginSource, declared: SessionPluginResolution, context: SourceContext): Promise<ResolvedArtifact> {
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> =>
    fn().catch((error: unknown) => {
      if (error instanceof PluginSourceError) throw validationFailure(error.message);
      throw error;
    });
  switch (source._tag) {
    case "File":
      return wrap(async () => {
        const { path, digest } = await digestOfFile(filePath(source.uri));
        const integrity = `sha256:${digest}`;
        checkDeclared(declared, { version: declared.version ?? "", integrity });
        return { resolved: { pluginId: declared.pluginId, version: declared.version ?? `file-sha256:${digest}`, integrity }, artifact: { kind: "file", path, digest } };
      });
    case "Package":
      return wrap(async () => {
        if (!isPackageName(source.name)) throw validationFailure(`Package source ${JSON.stringify(source.name)} is not an exact npm package name.`);
        const settings = settingsOf(context);
        const resolution = await resolveNpmPackage(source.name, source.requestedVersion, registryOptions(settings), settings.cache.bounds.maxDownloadBytes);
        const { version, integrity } = resolution;
        // A declared pin that the registry contradicts is refused before anything is downloaded.
        if (declared.version !== undefined && declared.version !== version) throw conflict(`declared_mismatch: package ${source.name} resolved to version ${version}, not the declared ${declared.version}.`);
        checkDeclared(declared, { version, integrity });
        const module = await npmModule(resolution, settings);
        return { resolved: { pluginId: declared.pluginId, version, integrity }, artifact: { kind: "npm", ...resolution, digest: module.digest } };
      });
    case "Git":
      return wrap(async () => {
        const settings = settingsOf(context);
        const { commit, directory } = await resolveGitSource(source.url, source.ref, settings.cache, { resolveTimeoutMs: settings.resolveTimeoutMs, installTimeoutMs: settings.installTimeoutMs });
        const integrity = `git-sha1:${commit}`;
        checkDeclared(declared, { version: declared.version ?? integrity, integrity });
        const module = await resolvePackageRoot(directory, source.url);
        // The normalized URL: the cache key (artifactCacheEntry) is computed from it.
        return { resolved: { pluginId: declared.pluginId, version: declared.version ?? integrity, integrity }, artifact: { kind: "git", url: checkGitUrl(source.url), commit, digest: module.digest } };
      });
    case "Static": {
      const entry = context.staticPlugins?.get(source.id);
      if (!context.staticPlugins || context.staticPlugins.size === 0) throw unavailable("Static plugin sources are unavailable: this host links no static Session plugins.");
      if (!entry) throw validationFailure(`This host links no static Session plugin ${JSON.stringify(source.id)}.`);
      if (entry.pluginId !== declared.pluginId) throw conflict(`declared_mismatch: static source ${source.id} provides plugin ${entry.pluginId}, not ${declared.pluginId}.`);
      if (declared.version !== undefined && declared.version !== entry.version) throw conflict(`declared_mismatch: static source ${source.id} is version ${entry.version}, not ${declared.version}.`);
      checkDeclared(declared, { version: entry.version });
      return { resolved: { pluginId: entry.pluginId, version: entry.version }, artifact: { kind: "static", id: source.id, version: entry.version } };
    }
    case "Bundle":
      throw unavailable("Bundle plugin sources are a Worker host capability; this Node host does not load them.");
  }
}

/** Loads exactly the recorded artifact (the plugin value), or fails with a safe `PluginSourceError`. */
export async function loadArtifact(artifact: ArtifactRecord, context: SourceContext): Promise<{ value: unknown; packageVersion?: string }> {
  switch (artifact.kind) {
    case "file": {
      const { path, digest } = await digestOfFile(artifact.path);
      if (digest !== artifact.digest) throw new PluginSourceError("The recorded plugin file changed since the revision was recorded; refresh the Session plugin to adopt it.");
      return { value: await importPluginModule({ path, digest }) };
    }
    case "package": {
      const resolved = await resolvePluginSource(artifact.name, context.projectDirectory);
      if (resolved.packageVersion !== artifact.version || resolved.digest !== artifact.digest) {
        throw new PluginSourceError(`The recorded package ${artifact.name}@${artifact.version} is no longer installed as recorded; refresh the Session plugin to adopt what is installed.`);
      }
      return { value: await importPluginModule(resolved), packageVersion: artifact.version };
    }
    case "npm":
    case "git": {
      const settings = settingsOf(context);
      let module: ResolvedModule;
      try {
        module =
          artifact.kind === "npm"
            ? await npmModule(artifact, settings)
            : await resolvePackageRoot(await installGitCommit(artifact.url, artifact.commit, settings.cache, { resolveTimeoutMs: settings.resolveTimeoutMs, installTimeoutMs: settings.installTimeoutMs }), artifact.url);
      } catch (error) {
        throw error instanceof PluginSourceError ? error : new PluginSourceError(error instanceof Error ? error.message : String(error));
      }
      const label = artifact.kind === "npm" ? `${artifact.name}@${artifact.version}` : `${artifact.url} at ${artifact.commit}`;
      if (module.digest !== artifact.digest) throw new PluginSourceError(`The installed plugin ${label} no longer has the recorded entry file; refresh the Session plugin.`);
      return { value: await importPluginModule(module), ...(artifact.kind === "npm" ? { packageVersion: artifact.version } : {}) };
    }
    case "static": {
      const entry = context.staticPlugins?.get(artifact.id);
      if (!entry || entry.version !== artifact.version) throw new PluginSourceError(`The static Session plugin ${artifact.id}@${artifact.version} is no longer linked into this host.`);
      return { value: entry.plugin };
    }
  }
}

export { describeSource } from "./session-overlays.js";

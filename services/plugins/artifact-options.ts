// The SDK's `sessionPluginArtifacts` option and its check, free of the installers' imports so
// the SDK can validate it without loading the plugin room (session-sources.ts builds the settings).
import { createHash, randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** The SDK's `sessionPluginArtifacts`: how `Package` and `Git` Session plugin sources are installed. */
export interface SessionPluginArtifactOptions {
  /** Default: one directory per database under `plugin-artifacts/` in the state directory. */
  readonly cacheDirectory?: string | undefined;
  /**
   * `registry` is the npm registry (default `ZE_HARNESS_NPM_REGISTRY`, `npm_config_registry`, then
   * https://registry.npmjs.org/). `command` and `arguments` are accepted for the reference's shape
   * and unused: this host fetches and verifies packages itself and runs no package manager.
   */
  readonly packageManager?: { readonly command?: string | undefined; readonly registry?: string | undefined; readonly arguments?: readonly string[] | undefined } | undefined;
  /** Bounds a packument request or a Git clone (default unlimited). */
  readonly resolveTimeoutMs?: number | undefined;
  /** Bounds a tarball download and unpacking or a Git checkout (default unlimited). */
  readonly installTimeoutMs?: number | undefined;
}

/** What is wrong with the options, if anything. */
export function artifactOptionsProblem(options: SessionPluginArtifactOptions): string | undefined {
  for (const key of ["resolveTimeoutMs", "installTimeoutMs"] as const) {
    const value = options[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) return `sessionPluginArtifacts.${key} must be a positive integer of milliseconds.`;
  }
  if (options.cacheDirectory !== undefined && !isAbsolute(options.cacheDirectory)) return "sessionPluginArtifacts.cacheDirectory must be an absolute path.";
  const registry = options.packageManager?.registry;
  if (registry !== undefined && !/^https?:\/\/[^\s@]+$/.test(registry)) return "sessionPluginArtifacts.packageManager.registry must be an http(s) URL without credentials.";
  return undefined;
}

/**
 * A host's default cache directory: one per database under `<state>/plugin-artifacts/`, since
 * pruning frees what that database's revisions do not reference (`:memory:` gets a private one in
 * the OS temporary directory).
 */
export function defaultArtifactCacheDirectory(stateDirectory: string, database: string): string {
  if (database === ":memory:") return join(tmpdir(), `ze-harness-plugin-artifacts-${randomUUID()}`);
  const identity = /^[a-z][a-z0-9+.-]*:/i.test(database) ? database : resolve(stateDirectory, database);
  return join(stateDirectory, "plugin-artifacts", createHash("sha256").update(identity).digest("hex").slice(0, 16));
}

// Which configuration files apply, in layer order: the global `config.json`, then either the
// explicit `--config` file or the nearest project `ze-harness.config.json` above the working
// directory. Discovery only looks; reading, parsing and validating happen in file.ts.
import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { globalConfigFile, PROJECT_CONFIG_FILE, type Env } from "./paths.js";

/**
 * Where a layer came from. `explicit` is a `--config PATH` file, which takes the project layer's
 * place; `inline` is a configuration object an embedding program passes (the SDK's `config`),
 * merged last.
 */
export type ConfigScope = "global" | "project" | "explicit" | "inline";

export interface ConfigSource {
  readonly scope: ConfigScope;
  /** Absolute path. */
  readonly file: string;
}

export interface DiscoverOptions {
  /** The working directory the project search starts from (resolved against `process.cwd()` if relative). */
  readonly cwd: string;
  readonly env: Env;
  /** An explicit `--config PATH` (relative paths resolve from `cwd`). It must exist; it replaces the project layer. */
  readonly configFile?: string | undefined;
}

/**
 * Whether something is at `path`. Missing paths (or a missing parent) are absent; any other
 * failure (a permission error, say) counts as present so reading it reports the problem
 * instead of the layer silently disappearing.
 */
function present(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/** The nearest `ze-harness.config.json` in `cwd` or any ancestor, up to the filesystem root. */
export function findProjectConfig(cwd: string): string | undefined {
  let current = resolve(cwd);
  for (;;) {
    const candidate = join(current, PROJECT_CONFIG_FILE);
    if (present(candidate)) return candidate;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The configuration files that apply, lowest precedence first. Absent optional files are omitted. */
export function discoverConfigFiles(options: DiscoverOptions): ConfigSource[] {
  const cwd = resolve(options.cwd);
  const sources: ConfigSource[] = [];
  const global = globalConfigFile(options.env);
  if (present(global)) sources.push({ scope: "global", file: global });
  if (options.configFile !== undefined) {
    sources.push({ scope: "explicit", file: resolve(cwd, options.configFile) });
  } else {
    const project = findProjectConfig(cwd);
    if (project !== undefined) sources.push({ scope: "project", file: project });
  }
  return sources;
}

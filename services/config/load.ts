// The whole load: discover → read, parse and validate each file on its own → normalize →
// merge. The first failing file fails the load; nothing partial is returned.
import { discoverConfigFiles, type ConfigScope, type DiscoverOptions } from "./discover.js";
import type { ConfigResult } from "./errors.js";
import { readConfigFile } from "./file.js";
import { mergeConfigs } from "./merge.js";
import { normalizeConfig } from "./normalize.js";
import { homeDirectory } from "./paths.js";
import type { Config } from "./types.js";

export type LoadConfigOptions = DiscoverOptions;

/** One file's contribution, after validation and normalization. */
export interface ConfigLayer {
  readonly scope: ConfigScope;
  readonly file: string;
  readonly config: Config;
}

export interface LoadedConfig {
  /** The merged configuration (`{}` when no file exists). */
  readonly config: Config;
  /** The layers that were merged, lowest precedence first. */
  readonly layers: readonly ConfigLayer[];
}

/** Loads the global file, then the explicit `--config` file or the nearest project file, and merges them. */
export function loadConfig(options: LoadConfigOptions): ConfigResult<LoadedConfig> {
  const home = homeDirectory(options.env);
  const layers: ConfigLayer[] = [];
  for (const source of discoverConfigFiles(options)) {
    const read = readConfigFile(source.file);
    if (!read.ok) return read;
    layers.push({ ...source, config: normalizeConfig(read.value, { file: source.file, home }) });
  }
  return { ok: true, value: { config: mergeConfigs(layers.map((layer) => layer.config)), layers } };
}

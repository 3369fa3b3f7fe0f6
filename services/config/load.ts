// The whole load: discover → read, parse and validate each file on its own → normalize →
// merge. The first failing file fails the load; nothing partial is returned.
import { discoverConfigFiles, type ConfigScope, type DiscoverOptions } from "./discover.js";
import type { ConfigResult } from "./errors.js";
import { readConfigFile } from "./file.js";
import { mergeConfigs } from "./merge.js";
import { normalizeConfig } from "./normalize.js";
import { homeDirectory } from "./paths.js";
import { validateConfig } from "./validate.js";
import { join, resolve } from "node:path";
import type { Config } from "./types.js";

export interface LoadConfigOptions extends DiscoverOptions {
  /**
   * A configuration object handed over in code (the embedded SDK's `config`): validated like a
   * file and merged last. Relative paths in it resolve from `cwd`.
   */
  readonly inline?: unknown;
}

/** The name errors give the inline layer (a pseudo-file in `cwd`, so relative paths resolve there). */
export const INLINE_CONFIG_NAME = "(inline config)";

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

/** Loads the global file, then the explicit `--config` file or the nearest project file, then the inline object, and merges them. */
export function loadConfig(options: LoadConfigOptions): ConfigResult<LoadedConfig> {
  const home = homeDirectory(options.env);
  const layers: ConfigLayer[] = [];
  for (const source of discoverConfigFiles(options)) {
    const read = readConfigFile(source.file);
    if (!read.ok) return read;
    layers.push({ ...source, config: normalizeConfig(read.value, { file: source.file, home }) });
  }
  if (options.inline !== undefined) {
    const file = join(resolve(options.cwd), INLINE_CONFIG_NAME);
    const validated = validateConfig(options.inline, file);
    if (!validated.ok) return validated;
    layers.push({ scope: "inline", file, config: normalizeConfig(validated.value, { file, home }) });
  }
  return { ok: true, value: { config: mergeConfigs(layers.map((layer) => layer.config)), layers } };
}

/**
 * The file of the last layer that set the top-level `key`, or undefined when none did. Merged
 * objects deep-merge, so this is the file whose value the merge ended with for scalars, arrays
 * and an object no other layer added to (e.g. `providers: {}`: any non-empty layer would have
 * filled it). Consumers use it to name the file of a problem found after the merge.
 */
export function fileSettingKey(layers: readonly ConfigLayer[], key: keyof Config): string | undefined {
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const layer = layers[index]!;
    if (Object.hasOwn(layer.config, key)) return layer.file;
  }
  return undefined;
}

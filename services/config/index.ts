// services/config: discovery and layered merge of `config.json` / `ze-harness.config.json`,
// validated by generated/config.schema.json. See README.md.
export { fileSettingKey, loadConfig, type ConfigLayer, type LoadConfigOptions, type LoadedConfig } from "./load.js";
export { discoverConfigFiles, findProjectConfig, type ConfigScope, type ConfigSource, type DiscoverOptions } from "./discover.js";
export { readConfigFile } from "./file.js";
export { validateConfig } from "./validate.js";
export { MAX_CONFIG_DEPTH } from "./depth.js";
export { mergeConfigs } from "./merge.js";
export { normalizeConfig, expandHome, isLocalPluginSource, pluginSource } from "./normalize.js";
export {
  APP_DIRECTORY,
  GLOBAL_CONFIG_FILE,
  PROJECT_CONFIG_FILE,
  configDirectory,
  globalConfigFile,
  homeDirectory,
  stateDirectory,
  type Env,
} from "./paths.js";
export {
  configInvalid,
  configUnreadable,
  describeConfigError,
  type ConfigError,
  type ConfigInvalid,
  type ConfigResult,
  type ConfigUnreadable,
} from "./errors.js";
export type * from "./types.js";

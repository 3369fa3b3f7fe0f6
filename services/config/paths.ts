// Where configuration and durable state live, from an environment map (pass `process.env`
// in production, a literal map in tests). Only absolute XDG values count; relative ones are
// ignored, as the reference requires.
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The environment variables these functions read: `HOME`, `XDG_CONFIG_HOME`, `XDG_DATA_HOME`. */
export type Env = Readonly<Record<string, string | undefined>>;

export const APP_DIRECTORY = "ze-harness";
/** The global configuration file's name inside `configDirectory(env)`. */
export const GLOBAL_CONFIG_FILE = "config.json";
/** The project configuration file's name, found by walking up from the working directory. */
export const PROJECT_CONFIG_FILE = "ze-harness.config.json";

const absolute = (value: string | undefined): string | undefined =>
  value !== undefined && value !== "" && isAbsolute(value) ? value : undefined;

/** The user's home: an absolute `HOME` from `env`, else the operating system's answer. */
export function homeDirectory(env: Env): string {
  return absolute(env["HOME"]) ?? homedir();
}

/** `$XDG_CONFIG_HOME/ze-harness` when `XDG_CONFIG_HOME` is absolute, else `~/.config/ze-harness`. */
export function configDirectory(env: Env): string {
  return join(absolute(env["XDG_CONFIG_HOME"]) ?? join(homeDirectory(env), ".config"), APP_DIRECTORY);
}

/** `$XDG_DATA_HOME/ze-harness` when `XDG_DATA_HOME` is absolute, else `~/.local/share/ze-harness`. */
export function stateDirectory(env: Env): string {
  return join(absolute(env["XDG_DATA_HOME"]) ?? join(homeDirectory(env), ".local", "share"), APP_DIRECTORY);
}

/** The global configuration file: `<configDirectory>/config.json`. */
export function globalConfigFile(env: Env): string {
  return join(configDirectory(env), GLOBAL_CONFIG_FILE);
}

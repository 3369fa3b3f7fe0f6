// How a daemon and a command compare what they were started with ("first start wins"): the
// database as its resolved location (a file URL, `:memory:`, or a server URL without
// credentials) and the `--config` file as an absolute path.
import { isAbsolute, resolve } from "node:path";
import { redactedServerUrl, resolveDatabaseLocation } from "../storage/location.js";
import { daemonDirectory, type Env } from "./paths.js";

export const DEFAULT_DATABASE_FILE = "ze-harness.db";

/** The database a host opens for `--database` (or ZE_HARNESS_DB, or the default file). */
export function databaseIdentity(database: string | undefined, env: Env): string {
  const option = database ?? env["ZE_HARNESS_DB"] ?? DEFAULT_DATABASE_FILE;
  try {
    const location = resolveDatabaseLocation(option, daemonDirectory(env));
    return location.kind === "remote" ? redactedServerUrl(location.url) : location.url;
  } catch {
    return option;
  }
}

/** True when the command names its database itself (a flag or ZE_HARNESS_DB). */
export const namesDatabase = (database: string | undefined, env: Env): boolean => database !== undefined || env["ZE_HARNESS_DB"] !== undefined;

export const configIdentity = (config: string | undefined, cwd: string): string | null =>
  config === undefined ? null : isAbsolute(config) ? resolve(config) : resolve(cwd, config);

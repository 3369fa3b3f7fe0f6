// The daemon keeps the host-wide configuration it started with — `providers`, the model catalog
// (services/host/project-scopes.ts: the host's own scope is never rebuilt on an edit) — while a
// project file's other settings apply at its next Turn. So an error about a provider or a model
// that comes from the daemon gets `run \`ze-harness service restart\` after editing the config`,
// but only when it is true: one of the daemon's host config files (the global config.json and
// its --config or the project file nearest its server root) changed after the daemon started.
import { statSync } from "node:fs";
import { findProjectConfig } from "../services/config/discover.js";
import { globalConfigFile } from "../services/config/paths.js";
import type { Connection } from "./base.js";

export const RESTART_HINT = "run `ze-harness service restart` after editing the config";

/** The error tags a configuration change can cause. */
const CONFIG_TAGS = new Set(["ProviderInvalid", "ProvidersEmpty", "UnavailableError", "NotFoundError", "ValidationError", "ConfigInvalid"]);

function tagOf(error: unknown): string | undefined {
  const failure = error as { body?: { _tag?: unknown }; _tag?: unknown; tag?: unknown } | null;
  const tag = failure?.body?._tag ?? failure?._tag ?? failure?.tag;
  return typeof tag === "string" ? tag : undefined;
}

/** True when a host config file of the daemon was written after it started. */
function editedSinceStart(daemon: NonNullable<Connection["daemon"]>, env: NodeJS.ProcessEnv): boolean {
  const started = Date.parse(daemon.startedAt);
  if (!Number.isFinite(started)) return false;
  const files = [globalConfigFile(env), daemon.config ?? findProjectConfig(daemon.serverRoot)].filter((file): file is string => file !== undefined);
  return files.some((file) => {
    try {
      return statSync(file).mtimeMs > started;
    } catch {
      return false;
    }
  });
}

/** `line` with the restart hint appended when it applies (see above). */
export function withRestartHint(line: string, error: unknown, connection: Connection | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const daemon = connection?.daemon;
  if (daemon === undefined || line.includes(RESTART_HINT)) return line;
  const tag = tagOf(error);
  if (tag === undefined || !CONFIG_TAGS.has(tag) || !/\b(provider|model)s?\b/i.test(line)) return line;
  return editedSinceStart(daemon, env) ? `${line}; ${RESTART_HINT}` : line;
}

// Load-time rewrites of one validated file, done before layers merge because they depend on
// which file declared a value:
// - a local plugin source (`./`, `../`) resolves from the directory of the declaring file;
// - for `read`, `edit` and `external_directory` rules (top-level and per agent), a leading
//   `~`, `~/`, `$HOME` or `$HOME/` in the resource expands to the user's home directory.
//   Other actions (notably `shell`, whose resource is raw command text) are never expanded.
import { dirname, resolve } from "node:path";
import type { AgentConfig, Config, PermissionRule, PluginDeclaration } from "./types.js";

const HOME_EXPANDED_ACTIONS = new Set(["read", "edit", "external_directory"]);

/** Whether a plugin source is a local path (as opposed to an npm package name). */
export const isLocalPluginSource = (source: string): boolean =>
  source.startsWith("./") || source.startsWith("../") || source.startsWith("/");

/** The source a plugin declaration names. */
export const pluginSource = (declaration: PluginDeclaration): string =>
  typeof declaration === "string" ? declaration : declaration.source;

function resolvePlugin(declaration: PluginDeclaration, directory: string): PluginDeclaration {
  const source = pluginSource(declaration);
  if (!isLocalPluginSource(source)) return declaration;
  const absolute = resolve(directory, source);
  return typeof declaration === "string" ? absolute : { ...declaration, source: absolute };
}

/** `~`, `~/x`, `$HOME`, `$HOME/x` → the home directory (+ `/x`); anything else unchanged. */
export function expandHome(resource: string, home: string): string {
  const base = home.length > 1 ? home.replace(/\/+$/, "") : home;
  for (const prefix of ["~", "$HOME"]) {
    if (resource === prefix) return base;
    if (resource.startsWith(`${prefix}/`)) return `${base}/${resource.slice(prefix.length + 1)}`;
  }
  return resource;
}

function expandRules(rules: readonly PermissionRule[], home: string): PermissionRule[] {
  return rules.map((rule) =>
    HOME_EXPANDED_ACTIONS.has(rule.action) ? { ...rule, resource: expandHome(rule.resource, home) } : rule,
  );
}

/** Applies the load-time rewrites to one file's validated config; the input is not modified. */
export function normalizeConfig(config: Config, context: { readonly file: string; readonly home: string }): Config {
  const directory = dirname(context.file);
  let agents: Record<string, AgentConfig> | undefined;
  if (config.agents) {
    agents = {};
    for (const [id, agent] of Object.entries(config.agents)) {
      agents[id] = agent.permissions ? { ...agent, permissions: expandRules(agent.permissions, context.home) } : agent;
    }
  }
  return {
    ...config,
    ...(agents && { agents }),
    ...(config.permissions && { permissions: expandRules(config.permissions, context.home) }),
    ...(config.plugins && { plugins: config.plugins.map((plugin) => resolvePlugin(plugin, directory)) }),
  };
}

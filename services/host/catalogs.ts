// The host's catalogs a Turn draws on: the agent catalog (built-in, config and Markdown agents,
// loaded once at startup — a bad configuration stops the host) and the Skills of each workdir
// (discovered on first use and kept until the host restarts; the reference's runtime reload
// rescans). Discovery warnings (a replaced duplicate, a malformed file) go to `warn` once.
import type { Config, ConfigLayer, Env } from "../config/index.js";
import { describeAgentCatalogError, loadAgentCatalog, type AgentCatalog } from "../workspace/agents.js";
import type { Skill } from "../../plugin/index.js";
import type { LocalSkill, SkillDiscovery } from "../workspace/skills.js";
import { HarnessStartupError } from "./errors.js";

export interface HostCatalogs {
  /** The current agents: the plugin generation's catalog once plugins are loaded, else config and Markdown agents. */
  readonly agents: AgentCatalog;
  skills(workdir: string): Promise<SkillDiscovery>;
}

export function loadHostCatalogs(options: {
  readonly config: Config;
  readonly layers: readonly ConfigLayer[];
  readonly env: Env;
  readonly warn?: ((message: string) => void) | undefined;
  /** The plugin generation's catalog (built-in, plugin, config and Markdown agents), when there is one. */
  readonly current?: (() => AgentCatalog | undefined) | undefined;
  /** The Skills the host plugin generation registered (a discovered Skill of the same id replaces one). */
  readonly pluginSkills?: (() => readonly Skill[]) | undefined;
}): HostCatalogs {
  const loaded = loadAgentCatalog({ configLayers: options.layers, env: options.env });
  if (!loaded.ok) throw new HarnessStartupError(loaded.error._tag, describeAgentCatalogError(loaded.error));
  const byWorkdir = new Map<string, Promise<SkillDiscovery>>();
  const base = loaded.value;
  return {
    get agents() {
      return options.current?.() ?? base;
    },
    skills(workdir) {
      let found = byWorkdir.get(workdir);
      if (!found) {
        // Skill discovery (and its YAML parser) loads on first use, not in every one-shot command.
        found = import("../workspace/skills.js")
          .then(({ discoverSkills }) => discoverSkills({ cwd: workdir, env: options.env, configSkills: options.config.skills }))
          .then((discovery) => {
            for (const warning of discovery.warnings) options.warn?.(warning.message);
            return discovery;
          });
        byWorkdir.set(workdir, found);
      }
      const plugin = options.pluginSkills?.() ?? [];
      if (plugin.length === 0) return found;
      return found.then((discovery) => {
        const local = new Set(discovery.skills.map((skill) => skill.id));
        const added = plugin.filter((skill) => !local.has(skill.id)).map(pluginAsDiscovered);
        return { ...discovery, skills: [...discovery.skills, ...added].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
      });
    },
  };
}

/** A plugin Skill in the discovered Skills' shape; `plugin` carries the declaration (its body loads from it, not from a file). */
export type PluginDiscoveredSkill = LocalSkill & { readonly plugin: Skill };

export function pluginAsDiscovered(skill: Skill): PluginDiscoveredSkill {
  return {
    id: skill.id,
    displayName: skill.displayName,
    description: skill.description,
    advertised: skill.modelAdvertisement.advertised,
    userInvocable: skill.modelAdvertisement.userInvocable,
    version: skill.version.skillVersion,
    publicMetadata: skill.publicMetadata as LocalSkill["publicMetadata"],
    file: skill.baseLocation,
    directory: skill.baseLocation,
    source: { scope: "config", directory: skill.baseLocation } as LocalSkill["source"],
    digest: skill.version.sourceVersion,
    plugin: skill,
  };
}

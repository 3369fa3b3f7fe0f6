// The host's agent catalog: the built-in agents, patched and extended by the `agents` map of
// the config layers and by Markdown files in `<state>/agents`, with the default agent chosen.
// Pure apart from reading the Markdown directory; everything it returns is frozen, so one
// catalog can back many Turns. Failures are typed values (`_tag`), never thrown.
//
// Precedence (reference, "Configured agents"): plugin/built-in declarations → global JSON →
// global Markdown (lexical) → project/explicit JSON → programmatic → Session plugin declarations.
// Entries merge by ID: given fields replace, omitted ones stay, `permissions` append. Declarations
// (built-in, host plugin, Session plugin) never share an ID; configuration does not patch Session
// plugin agents.
import { join } from "node:path";
import type { AgentMode, PermissionRule, SessionAgentsResponse } from "../../generated/client/types.gen.js";
import type { ConfigScope } from "../config/discover.js";
import { expandHome } from "../config/normalize.js";
import { homeDirectory, stateDirectory, type Env } from "../config/paths.js";
import { isAgentId, scanAgentFiles, type AgentFileSkip, type AgentFileSystem } from "./agent-files.js";
import { BUILTIN_AGENTS, freezeAgent } from "./agent-builtins.js";
import { escapePointer, HOME_EXPANDED_ACTIONS, readOptions, type AgentPatch } from "./agent-options.js";

export { diskAgentFiles, isAgentId, MAX_AGENT_ID_LENGTH, type AgentFileSkip, type AgentFileSystem } from "./agent-files.js";
export { BUILTIN_AGENTS, DEFAULT_BUILTIN_AGENT, READ_ONLY_SHELL_COMMANDS, readOnlyShellRules } from "./agent-builtins.js";

/** Which tools an agent offers the model (the reference's `AgentToolSelection`). */
export type AgentToolSelection =
  | { readonly mode: "all" }
  | { readonly mode: "none" }
  | { readonly mode: "include"; readonly names: readonly [string, ...string[]]; readonly optionalNames?: readonly string[] };

export type AgentOrigin = "builtin" | "config" | "markdown" | "plugin" | "session";

/** One resolved agent. Frozen. */
export interface AgentDefinition {
  readonly id: string;
  readonly displayName: string;
  readonly description: string;
  /** Instructions sent first on every model request; `""` for none. */
  readonly system: string;
  /** `provider/model`; absent → the Session's or host's model. */
  readonly model?: string;
  readonly mode: AgentMode;
  /** Appended after the server's and Session's rules (the last matching rule wins). */
  readonly permissions: readonly PermissionRule[];
  readonly tools: AgentToolSelection;
  /** Where the agent was first declared; later patches do not change it. */
  readonly origin: AgentOrigin;
  /** Preferred default when no default is configured (a declaration property, not configurable). */
  readonly fallbackDefault?: boolean;
}

/** One agent a plugin declared (services/plugins turns an `AgentDeclaration` into this). */
export interface PluginAgentDeclaration {
  readonly pluginId: string;
  readonly id: string;
  readonly displayName: string;
  readonly description: string;
  /** The declaration's instruction texts, joined by blank lines; `""` for none. */
  readonly system: string;
  readonly model?: string;
  readonly mode: AgentMode;
  readonly permissions: readonly PermissionRule[];
  readonly tools: AgentToolSelection;
  readonly fallbackDefault?: boolean;
}

/** The agents of one plugin scope, and the default one of its plugins chose (`context.agents.setDefault`). */
export interface PluginAgentLayer {
  readonly agents: readonly PluginAgentDeclaration[];
  readonly defaultAgent?: { readonly agent: string; readonly pluginId: string } | undefined;
}

/** The part of a config layer this module reads. `ConfigLayer` from services/config fits. */
export interface AgentConfigLayer {
  readonly file: string;
  readonly scope?: ConfigScope | "programmatic";
  readonly config: { readonly agents?: { readonly [id: string]: unknown }; readonly defaultAgent?: unknown };
}

export interface LoadAgentCatalogOptions {
  /** The config layers, lowest precedence first (`loadConfig(...).layers`). */
  readonly configLayers: readonly AgentConfigLayer[];
  /** For the Markdown directory (`XDG_DATA_HOME`, `HOME`) and `~` in Markdown permission rules. */
  readonly env: Env;
  /** Accepted for the caller's convenience; the reference has no project-level agent files. */
  readonly cwd?: string;
  /** Where the Markdown agents are read: default `agentsDirectory(env)` on the host's disk (the Worker host: its `/workspace` store). */
  readonly markdown?: { readonly directory: string; readonly files: AgentFileSystem } | undefined;
  /** Programmatic configuration, applied last. `file` names it in errors. */
  readonly programmatic?: { readonly file?: string; readonly agents?: { readonly [id: string]: unknown }; readonly defaultAgent?: unknown };
  /** Host plugin declarations: a layer beside the built-ins, patched by configuration. */
  readonly plugins?: PluginAgentLayer;
  /** A Session overlay's declarations: applied last, not patched by configuration; its default replaces the others. */
  readonly sessionPlugins?: PluginAgentLayer;
}

/** An agent entry (JSON or Markdown) that cannot be accepted. `pointer` is a JSON pointer into `file`. */
export interface AgentConfigInvalid {
  readonly _tag: "AgentConfigInvalid";
  readonly file: string;
  /** `/agents/<id>/<key>` for JSON, `/<key>` into the frontmatter for Markdown. */
  readonly pointer: string;
  readonly agent?: string;
  readonly message: string;
}

/** The configured `defaultAgent` is unknown, disabled or subagent-only. */
export interface AgentDefaultInvalid {
  readonly _tag: "AgentDefaultInvalid";
  /** The file of the last layer that set `defaultAgent`. */
  readonly file: string;
  readonly pointer: "/defaultAgent";
  readonly agent: string;
  readonly reason: "missing" | "disabled" | "subagent";
  /** For `disabled`: the file whose entry disabled it. */
  readonly disabledIn?: string;
  readonly message: string;
}

export type AgentCatalogError = AgentConfigInvalid | AgentDefaultInvalid;
export type AgentCatalogResult = { readonly ok: true; readonly value: AgentCatalog } | { readonly ok: false; readonly error: AgentCatalogError };

export interface AgentCatalog {
  /** The enabled agent with this ID. */
  get(id: string): AgentDefinition | undefined;
  /** Enabled agents, sorted by ID. */
  list(): readonly AgentDefinition[];
  /** The agent Turns use when they name none; undefined only when no enabled agent is primary-capable. */
  readonly defaultAgent: string | undefined;
  /** The agent if it may take user Turns (`primary` or `all`). */
  primary(id: string): AgentDefinition | undefined;
  /** The agent if the `task` tool may spawn it (`subagent` or `all`). */
  spawnable(id: string): AgentDefinition | undefined;
  /** Every spawnable agent, sorted by ID (the `task` tool's list). */
  subagents(): readonly AgentDefinition[];
  /** Markdown files that did not become agents (best-effort loading); for logs only. */
  readonly skipped: readonly AgentFileSkip[];
  /** The `GET …/sessions/{id}/agents` body for host agents. */
  toSessionAgentsResponse(): SessionAgentsResponse;
}

/** One line for people: `file: /pointer: message`. */
export function describeAgentCatalogError(error: AgentCatalogError): string {
  return `${error.file}: ${error.pointer === "" ? "(document)" : error.pointer}: ${error.message}`;
}

/** `<state directory>/agents`: `$XDG_DATA_HOME/ze-harness/agents` or `~/.local/share/ze-harness/agents`. */
export function agentsDirectory(env: Env): string {
  return join(stateDirectory(env), "agents");
}

// ---------------------------------------------------------------------------------------------
// Merging

interface Draft {
  definition: AgentDefinition;
  enabled: boolean;
  disabledIn?: string;
}

type Applied = "applied" | "no-op" | "missing-instructions";

/**
 * Applies one entry. For an ID not registered yet the entry must define the agent (non-empty
 * `system`), except that an entry disabling it, or only re-enabling it, is a no-op: there is
 * nothing to hide or restore.
 */
function apply(drafts: Map<string, Draft>, id: string, patch: AgentPatch, origin: AgentOrigin, file: string): Applied {
  let draft = drafts.get(id);
  if (draft === undefined) {
    if (patch.system === undefined || patch.system.trim() === "") {
      const onlyToggle = Object.keys(patch).every((key) => key === "disabled");
      return patch.disabled === true || (onlyToggle && patch.disabled !== undefined) ? "no-op" : "missing-instructions";
    }
    draft = {
      definition: {
        id,
        displayName: id,
        description: `Custom agent "${id}".`,
        system: "",
        mode: "primary",
        permissions: [],
        tools: { mode: "all" },
        origin,
      },
      enabled: true,
    };
    drafts.set(id, draft);
  }
  const { disabled, permissions, ...fields } = patch;
  const merged = { ...draft.definition, ...fields };
  if (permissions !== undefined) merged.permissions = [...draft.definition.permissions, ...permissions];
  draft.definition = merged;
  if (disabled !== undefined) {
    draft.enabled = !disabled;
    if (disabled) draft.disabledIn = file;
    else delete draft.disabledIn;
  }
  return "applied";
}

const compareIds = (a: AgentDefinition, b: AgentDefinition): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const isPrimary = (agent: AgentDefinition): boolean => agent.mode !== "subagent";
const isSpawnable = (agent: AgentDefinition): boolean => agent.mode !== "primary";

function buildCatalog(agents: readonly AgentDefinition[], defaultAgent: string | undefined, skipped: readonly AgentFileSkip[]): AgentCatalog {
  const sorted = Object.freeze([...agents].sort(compareIds));
  const byId = new Map(sorted.map((agent) => [agent.id, agent]));
  const subagents = Object.freeze(sorted.filter(isSpawnable));
  return Object.freeze({
    get: (id: string) => byId.get(id),
    list: () => sorted,
    defaultAgent,
    primary: (id: string) => {
      const agent = byId.get(id);
      return agent && isPrimary(agent) ? agent : undefined;
    },
    spawnable: (id: string) => {
      const agent = byId.get(id);
      return agent && isSpawnable(agent) ? agent : undefined;
    },
    subagents: () => subagents,
    skipped: Object.freeze([...skipped]),
    toSessionAgentsResponse: (): SessionAgentsResponse => ({
      ...(defaultAgent !== undefined && { defaultAgent }),
      agents: sorted.map((agent) => ({
        id: agent.id,
        displayName: agent.displayName,
        description: agent.description,
        ...(agent.model !== undefined && { model: agent.model }),
        mode: agent.mode,
        // Config, Markdown and host plugin agents are the host's; Session-scope agents come from Session plugins.
        origin: agent.origin === "session" ? ("session" as const) : ("host" as const),
      })),
    }),
  });
}

const invalid = (file: string, pointer: string, message: string, agent?: string): AgentConfigInvalid => ({
  _tag: "AgentConfigInvalid",
  file,
  pointer,
  message,
  ...(agent !== undefined && { agent }),
});

/** Loads the catalog from the built-ins, the config layers, the Markdown directory and programmatic config. */
export function loadAgentCatalog(options: LoadAgentCatalogOptions): AgentCatalogResult {
  const drafts = new Map<string, Draft>(BUILTIN_AGENTS.map((definition) => [definition.id, { definition, enabled: true }]));
  const skipped: AgentFileSkip[] = [];
  let configuredDefault: { readonly agent: string; readonly file: string } | undefined;

  // Plugin declarations join the built-ins; a second declaration of an ID fails (reference: "Duplicate declarations between plugins still fail").
  const declare = (layer: PluginAgentLayer | undefined, origin: "plugin" | "session"): AgentConfigInvalid | undefined => {
    for (const declared of layer?.agents ?? []) {
      const file = `plugin:${declared.pluginId}`;
      if (!isAgentId(declared.id)) return invalid(file, "", `invalid agent ID ${JSON.stringify(declared.id)}`, declared.id);
      if (drafts.has(declared.id)) return invalid(file, "", `agent ${JSON.stringify(declared.id)} is already declared; plugins cannot redeclare a built-in, host or another plugin's agent`, declared.id);
      const definition: AgentDefinition = {
        id: declared.id,
        displayName: declared.displayName,
        description: declared.description,
        system: declared.system,
        ...(declared.model !== undefined ? { model: declared.model } : {}),
        mode: declared.mode,
        permissions: [...declared.permissions],
        tools: declared.tools,
        origin,
        ...(declared.fallbackDefault === true ? { fallbackDefault: true } : {}),
      };
      drafts.set(declared.id, { definition, enabled: true });
    }
    return undefined;
  };
  const pluginLayerError = declare(options.plugins, "plugin");
  if (pluginLayerError) return { ok: false, error: pluginLayerError };

  const applyJson = (layer: AgentConfigLayer): AgentConfigInvalid | undefined => {
    for (const [id, raw] of Object.entries(layer.config.agents ?? {})) {
      const pointer = `/agents/${escapePointer(id)}`;
      if (!isAgentId(id)) {
        return invalid(layer.file, pointer, `invalid agent ID ${JSON.stringify(id)}: at most 128 characters of "/"-separated segments, each a lowercase letter followed by lowercase letters and digits joined by single ".", "_" or "-"`, id);
      }
      const read = readOptions(raw);
      if (!read.ok) return invalid(layer.file, `${pointer}${read.problem.pointer}`, read.problem.message, id);
      if (apply(drafts, id, read.patch, "config", layer.file) === "missing-instructions") {
        return invalid(layer.file, `${pointer}/system`, `new agent ${JSON.stringify(id)} needs non-empty instructions (system)`, id);
      }
    }
    const chosen = layer.config.defaultAgent;
    if (chosen !== undefined) {
      if (typeof chosen !== "string") return invalid(layer.file, "/defaultAgent", "defaultAgent must be an agent ID");
      configuredDefault = { agent: chosen, file: layer.file };
    }
    return undefined;
  };

  const applyMarkdown = (): AgentConfigInvalid | undefined => {
    const home = homeDirectory(options.env);
    const scan = options.markdown !== undefined ? scanAgentFiles(options.markdown.directory, options.markdown.files) : scanAgentFiles(agentsDirectory(options.env));
    skipped.push(...scan.skipped);
    for (const entry of scan.files) {
      const read = readOptions(entry.options);
      if (!read.ok) {
        // Unsupported options are rejected rather than ignored; malformed ones skip the file.
        if (read.problem.kind === "unsupported") return invalid(entry.file, read.problem.pointer, read.problem.message, entry.id);
        skipped.push({ file: entry.file, reason: "malformed-options", message: read.problem.message });
        continue;
      }
      const patch = { ...read.patch };
      if (entry.body !== "") patch.system = entry.body;
      // The same `~` expansion services/config applies to rules in JSON files.
      if (patch.permissions) {
        patch.permissions = patch.permissions.map((rule) => (HOME_EXPANDED_ACTIONS.has(rule.action) ? { ...rule, resource: expandHome(rule.resource, home) } : rule));
      }
      if (apply(drafts, entry.id, patch, "markdown", entry.file) === "missing-instructions") {
        skipped.push({ file: entry.file, reason: "missing-instructions", message: `new agent ${JSON.stringify(entry.id)} has no instructions (body or system)` });
      }
    }
    return undefined;
  };

  const global = options.configLayers.filter((layer) => layer.scope === "global");
  const later = options.configLayers.filter((layer) => layer.scope !== "global");
  const steps: (() => AgentConfigInvalid | undefined)[] = [
    ...global.map((layer) => () => applyJson(layer)),
    applyMarkdown,
    ...later.map((layer) => () => applyJson(layer)),
  ];
  const programmatic = options.programmatic;
  if (programmatic !== undefined) {
    const file = programmatic.file ?? "<programmatic configuration>";
    steps.push(() => applyJson({ file, scope: "programmatic", config: programmatic }));
  }
  for (const step of steps) {
    const error = step();
    if (error) return { ok: false, error };
  }
  const sessionLayerError = declare(options.sessionPlugins, "session");
  if (sessionLayerError) return { ok: false, error: sessionLayerError };
  // Without a configured default a plugin's is kept (a Session overlay's replaces the host's; reference, "Configured agents").
  const pluginDefault = options.sessionPlugins?.defaultAgent ?? (configuredDefault === undefined ? options.plugins?.defaultAgent : undefined);
  if (pluginDefault !== undefined) configuredDefault = { agent: pluginDefault.agent, file: `plugin:${pluginDefault.pluginId}` };

  const enabled = [...drafts.values()].filter((draft) => draft.enabled).map((draft) => freezeAgent(draft.definition));
  let defaultAgent: string | undefined;
  if (configuredDefault !== undefined) {
    const { agent, file } = configuredDefault;
    const draft = drafts.get(agent);
    const fail = (reason: AgentDefaultInvalid["reason"], message: string, disabledIn?: string): AgentCatalogResult => ({
      ok: false,
      error: { _tag: "AgentDefaultInvalid", file, pointer: "/defaultAgent", agent, reason, message, ...(disabledIn !== undefined && { disabledIn }) },
    });
    if (draft === undefined) return fail("missing", `defaultAgent ${JSON.stringify(agent)} is not a registered agent`);
    if (!draft.enabled) {
      const where = draft.disabledIn ?? file;
      return fail("disabled", `defaultAgent ${JSON.stringify(agent)} is disabled (in ${where}); select another default in the same or a later layer`, where);
    }
    if (draft.definition.mode === "subagent") return fail("subagent", `defaultAgent ${JSON.stringify(agent)} is subagent-only; the default must support primary use (mode primary or all)`);
    defaultAgent = agent;
  } else {
    const candidates = enabled.filter(isPrimary).sort(compareIds);
    defaultAgent = (candidates.find((agent) => agent.fallbackDefault === true) ?? candidates[0])?.id;
  }
  return { ok: true, value: buildCatalog(enabled, defaultAgent, skipped) };
}

// A plugin generation: the immutable result of activating one revision's plugins (the host's
// baseline, or one Session's overlay) in order. Each plugin's setup runs alone; what it registered
// is checked against the plugins before it (and, for a Session overlay, against the host
// generation), then the scope's Skill transforms run, and the contributions become one frozen
// value: registry-ready tools, the Agent catalog layer, Skills, Skill sources, MCP definitions,
// models, a frozen hook pipeline, journal writers, event subscribers and each plugin's status in
// the contract's `RuntimePlugin` shape. A fatal failure rejects the whole generation: every
// cleanup already returned runs and nothing is kept.
import type { RuntimePlugin } from "../../generated/client/types.gen.js";
import type { McpServerDefinition, ModelDeclaration, PluginActivation, PluginCleanup, Skill, SkillSource, TurnEvent } from "../../plugin/index.js";
import { ToolRegistry } from "../tools/registry.js";
import type { AnyToolDefinition } from "../tools/tool.js";
import { describeAgentCatalogError, type AgentCatalog, type AgentCatalogResult, type PluginAgentLayer } from "../workspace/agents.js";
import { activatePlugin, runCleanup, type ActivatedPlugin, type ActivateOptions, type PluginCandidate, type Severity } from "./activate.js";
import type { HostCapabilities } from "./capabilities.js";
import { copyJson, hasTag, publicMessageOf } from "./checks.js";
import { applySkillPatch } from "./declarations.js";
import { HookPipeline, type HookHandlers } from "./hooks.js";
import { PluginJournal, type JournalSink } from "./journal.js";
import { RESERVED_TOOL_IDS, adaptTool, type PluginToolDefinition } from "./tool-declaration.js";
import { loadSkillSource } from "./skill-sources.js";

/** How long one Skill source may take to load (its plugin's revision fails past it). */
const SKILL_SOURCE_TIMEOUT_MS = 30_000;

export interface PluginSkillSource {
  readonly pluginId: string;
  readonly source: SkillSource;
}
export interface PluginMcpServer {
  readonly pluginId: string;
  readonly definition: McpServerDefinition;
}
export interface PluginModel {
  readonly pluginId: string;
  readonly declaration: ModelDeclaration;
}
export interface PluginSubscriber {
  readonly pluginId: string;
  readonly handler: (event: TurnEvent) => void | Promise<void>;
}

/** One activated revision. Frozen; `close()` runs the plugins' cleanups (once, last plugin first). */
export interface PluginGeneration {
  /** The revision id (`generationId` of its plugins' statuses). */
  readonly id: string;
  readonly activation: PluginActivation;
  /** Every candidate's status, in plugin order. */
  readonly plugins: readonly RuntimePlugin[];
  /** For the tool registry (see {@link createToolRegistry}); `permissions` may return a promise. */
  readonly tools: readonly PluginToolDefinition[];
  /** For `loadAgentCatalog({ plugins })` (host) or `({ sessionPlugins })` (a Session overlay). */
  readonly agents: PluginAgentLayer;
  /** The catalog built from `agents` when the options asked for one. */
  readonly agentCatalog: AgentCatalog | undefined;
  readonly skills: readonly Skill[];
  readonly skillSources: readonly PluginSkillSource[];
  readonly mcpServers: readonly PluginMcpServer[];
  readonly models: readonly PluginModel[];
  /** Frozen: the plugins' handlers in plugin, then registration, order. */
  readonly hooks: HookPipeline;
  /** By plugin id. */
  readonly journals: ReadonlyMap<string, PluginJournal>;
  readonly subscribers: readonly PluginSubscriber[];
  close(): Promise<void>;
}

export interface LoadPluginGenerationOptions extends Pick<ActivateOptions, "failClosed" | "nativeProviders" | "onDiagnostic"> {
  readonly activation: PluginActivation;
  /** The plugins, in order (see `configCandidates`, or inline objects). */
  readonly candidates: readonly PluginCandidate[];
  readonly capabilities: HostCapabilities;
  /** Tool ids already taken: the host's built-in and Core tools (`skill` and `task` are always reserved). */
  readonly reservedToolIds?: readonly string[] | undefined;
  /** MCP server ids and names host configuration uses. */
  readonly reservedMcp?: { readonly ids: readonly string[]; readonly names: readonly string[] } | undefined;
  /** A Session overlay's host generation: its tools, Skills and MCP servers cannot be reused. */
  readonly base?: PluginGeneration | undefined;
  /** Where `reportJournal` writes (absent: reports in a Turn are rejected). */
  readonly journal?: JournalSink | undefined;
  readonly setupTimeoutMs?: number | undefined;
  /** Builds (and so checks) the Agent catalog with this generation's layer; an error fails the generation. */
  readonly agentCatalog?: ((layer: PluginAgentLayer) => AgentCatalogResult) | undefined;
  /** Hears each candidate's turn before it activates: its index and the statuses of the ones before it. */
  readonly onProgress?: ((index: number, settled: readonly RuntimePlugin[]) => void) | undefined;
}

export type PluginGenerationResult =
  | { readonly ok: true; readonly generation: PluginGeneration }
  | { readonly ok: false; readonly message: string; readonly plugins: readonly RuntimePlugin[] };

/** The registration names a status lists, e.g. `tool:double`, `hook:tool.execute.before`. */
function registrationsOf(plugin: ActivatedPlugin): string[] {
  const c = plugin.contributions;
  const names = [
    ...c.tools.map((tool) => `tool:${tool.id}`),
    ...c.agents.map((agent) => `agent:${agent.entry.id}`),
    ...(c.defaultAgent !== undefined ? [`agent-default:${c.defaultAgent}`] : []),
    ...c.skills.map((skill) => `skill:${skill.id}`),
    ...c.skillSources.map((source) => `skill-source:${source.id}`),
    ...c.transforms.map((transform) => `skill-transform:${transform.id}`),
    ...c.mcpServers.map((server) => `mcp:${server.id}`),
    ...c.models.map((model) => `model:${model.providerId}/${model.modelId}`),
    ...c.journalKinds.map((kind) => `journal-kind:${kind.kind}`),
    ...c.hooks.map((hook) => `hook:${hook.name}`),
    ...(c.subscribers.length > 0 ? ["events:subscribe"] : []),
  ];
  return [...new Set(names)];
}

/** Namespaces the plugins accepted so far occupy; `clash` names the first reuse by `plugin`. */
class Namespaces {
  readonly plugins = new Set<string>();
  readonly tools: Set<string>;
  readonly agents = new Set<string>();
  readonly skills: Set<string>;
  readonly sources = new Set<string>();
  readonly transforms = new Set<string>();
  readonly mcpIds: Set<string>;
  readonly mcpNames: Set<string>;
  readonly models = new Set<string>();
  defaultAgent: string | undefined;

  constructor(options: LoadPluginGenerationOptions) {
    const base = options.base;
    this.tools = new Set([...RESERVED_TOOL_IDS, ...(options.reservedToolIds ?? []), ...(base?.tools.map((tool) => tool.id) ?? [])]);
    this.skills = new Set(base?.skills.map((skill) => skill.id) ?? []);
    this.mcpIds = new Set([...(options.reservedMcp?.ids ?? []), ...(base?.mcpServers.map((server) => server.definition.id) ?? [])]);
    this.mcpNames = new Set([...(options.reservedMcp?.names ?? []), ...(base?.mcpServers.map((server) => server.definition.name) ?? [])]);
  }

  clash(plugin: ActivatedPlugin): { severity: Severity; message: string } | undefined {
    const c = plugin.contributions;
    const fatal = (message: string) => ({ severity: "fatal" as const, message });
    if (this.plugins.has(plugin.pluginId)) return fatal(`Plugin id ${JSON.stringify(plugin.pluginId)} is used by another plugin of this revision.`);
    const tool = c.tools.find((declaration) => this.tools.has(declaration.id));
    if (tool) return { severity: "skip", message: `Tool rejected: a tool named ${JSON.stringify(tool.id)} is already registered.` };
    const agent = c.agents.find((declared) => this.agents.has(declared.entry.id));
    if (agent) return fatal(`Agent ${JSON.stringify(agent.entry.id)} is already declared by another plugin.`);
    if (c.defaultAgent !== undefined && this.defaultAgent !== undefined) return fatal("Another plugin of this revision already set the default Agent.");
    const skill = c.skills.find((declared) => this.skills.has(declared.id));
    if (skill) return fatal(`Skill ${JSON.stringify(skill.id)} is already registered.`);
    const source = c.skillSources.find((declared) => this.sources.has(declared.id) || this.plugins.has(declared.id) || declared.id === plugin.pluginId);
    if (source) return fatal(`Skill source id ${JSON.stringify(source.id)} is already used.`);
    const transform = c.transforms.find((declared) => this.transforms.has(declared.id));
    if (transform) return fatal(`Skill transform ${JSON.stringify(transform.id)} is already registered.`);
    const server = c.mcpServers.find((declared) => this.mcpIds.has(declared.id) || this.mcpNames.has(declared.name));
    if (server) return fatal(`MCP server ${JSON.stringify(server.id)} (${server.name}) reuses an id or name already in this scope.`);
    const model = c.models.find((declared) => this.models.has(`${declared.providerId}/${declared.modelId}`));
    if (model) return fatal(`Model ${model.providerId}/${model.modelId} is already registered.`);
    for (const ids of [c.tools.map((t) => t.id), c.agents.map((a) => a.entry.id), c.skills.map((s) => s.id), c.transforms.map((t) => t.id), c.mcpServers.map((s) => s.id)]) {
      if (new Set(ids).size !== ids.length) return fatal("The plugin registers one id twice.");
    }
    return undefined;
  }

  add(plugin: ActivatedPlugin): void {
    const c = plugin.contributions;
    this.plugins.add(plugin.pluginId);
    for (const tool of c.tools) this.tools.add(tool.id);
    for (const agent of c.agents) this.agents.add(agent.entry.id);
    if (c.defaultAgent !== undefined) this.defaultAgent = c.defaultAgent;
    for (const skill of c.skills) this.skills.add(skill.id);
    for (const source of c.skillSources) this.sources.add(source.id);
    for (const transform of c.transforms) this.transforms.add(transform.id);
    for (const server of c.mcpServers) {
      this.mcpIds.add(server.id);
      this.mcpNames.add(server.name);
    }
    for (const model of c.models) this.models.add(`${model.providerId}/${model.modelId}`);
  }
}

const freezeAll = <T>(items: T[]): readonly T[] => Object.freeze(items);

/** Activates the candidates in order into one generation, or rejects it. Never throws. */
export async function loadPluginGeneration(options: LoadPluginGenerationOptions): Promise<PluginGenerationResult> {
  const generationId = options.activation.revision.id;
  const settings: ActivateOptions = {
    activation: options.activation,
    capabilities: options.capabilities,
    timeoutMs: options.setupTimeoutMs,
    failClosed: options.failClosed,
    nativeProviders: options.nativeProviders,
    sourceVersion: generationId,
    onDiagnostic: options.onDiagnostic,
  };
  const session = options.activation.scope === "session";
  const namespaces = new Namespaces(options);
  const accepted: { plugin: ActivatedPlugin; candidate: PluginCandidate; index: number }[] = [];
  const statuses: RuntimePlugin[] = [];
  // Fields in the contract's order: source, generationId, pluginId?, packageVersion?, status, registrations, error?.
  const status = (candidate: PluginCandidate, fields: Partial<RuntimePlugin>): RuntimePlugin => ({
    source: candidate.source,
    generationId,
    ...(fields.pluginId !== undefined ? { pluginId: fields.pluginId } : {}),
    ...(fields.packageVersion !== undefined ? { packageVersion: fields.packageVersion } : {}),
    status: fields.status ?? "failed",
    registrations: fields.registrations ?? [],
    ...(fields.error !== undefined ? { error: fields.error } : {}),
  });
  const cleanups = () => accepted.map((entry) => entry.plugin.cleanup);
  const reject = async (message: string, culprit: number, culpritStatus: RuntimePlugin): Promise<PluginGenerationResult> => {
    for (const cleanup of cleanups().reverse()) await runCleanup(cleanup, "", options.onDiagnostic);
    const notActivated = `Not activated: the revision was rejected (${options.candidates[culprit]!.source}).`;
    const plugins = options.candidates.map((candidate, index) => {
      if (index === culprit) return culpritStatus;
      const earlier = statuses[index];
      if (earlier && earlier.status === "failed") return earlier;
      return status(candidate, { ...(earlier?.pluginId !== undefined ? { pluginId: earlier.pluginId } : {}), error: notActivated });
    });
    return { ok: false, message, plugins };
  };

  for (const [index, candidate] of options.candidates.entries()) {
    options.onProgress?.(index, [...statuses]);
    const result = await activatePlugin(candidate, settings);
    if (!result.ok) {
      const failed = status(candidate, { ...(result.pluginId !== undefined ? { pluginId: result.pluginId } : {}), error: result.message });
      if (result.severity === "fatal") return reject(`${candidate.source}: ${result.message}`, index, failed);
      statuses.push(failed);
      continue;
    }
    const clash = namespaces.clash(result.plugin);
    if (clash) {
      await runCleanup(result.plugin.cleanup, candidate.source, options.onDiagnostic);
      const failed = status(candidate, { pluginId: result.plugin.pluginId, error: clash.message });
      if (clash.severity === "fatal" || session) return reject(`${candidate.source}: ${clash.message}`, index, failed);
      statuses.push(failed);
      continue;
    }
    namespaces.add(result.plugin);
    accepted.push({ plugin: result.plugin, candidate, index });
    statuses.push(
      status(candidate, {
        pluginId: result.plugin.pluginId,
        ...(result.plugin.packageVersion !== undefined ? { packageVersion: result.plugin.packageVersion } : {}),
        status: "active",
        registrations: registrationsOf(result.plugin),
      }),
    );
  }

  // The scope's Skill sources, read now (skill-sources.ts); a source that fails fails its plugin's revision.
  let skills: Skill[] = accepted.flatMap((entry) => [...entry.plugin.contributions.skills]);
  const taken = new Set(skills.map((skill) => skill.id));
  for (const entry of accepted) {
    for (const source of entry.plugin.contributions.skillSources) {
      const loaded = await loadSkillSource(source, { files: options.capabilities.workspaceFiles, signal: AbortSignal.timeout(SKILL_SOURCE_TIMEOUT_MS), warn: (message) => options.onDiagnostic?.(entry.candidate.source, new Error(message)) });
      const clash = loaded.ok ? loaded.value.find((skill) => taken.has(skill.id) || options.base?.skills.some((held) => held.id === skill.id)) : undefined;
      if (!loaded.ok || clash) {
        const message = loaded.ok ? `Skill source ${JSON.stringify(source.id)} provides Skill ${JSON.stringify(clash!.id)}, which is already registered.` : `Skill source ${JSON.stringify(source.id)}: ${loaded.message}.`;
        return reject(`${entry.candidate.source}: ${message}`, entry.index, { ...statuses[entry.index]!, status: "failed", registrations: [], error: message });
      }
      for (const skill of loaded.value) taken.add(skill.id);
      skills.push(...loaded.value);
    }
  }
  // The scope's transforms, in registration order, over every Skill of the scope.
  for (const entry of accepted) {
    for (const transform of entry.plugin.contributions.transforms) {
      const next: Skill[] = [];
      for (const skill of skills) {
        let patch: unknown;
        try {
          patch = await transform.transform(copyJson(skill));
        } catch (error) {
          options.onDiagnostic?.(entry.candidate.source, error);
          const message = `Skill transform ${JSON.stringify(transform.id)} failed on Skill ${JSON.stringify(skill.id)}${hasTag(error, "PluginError") && publicMessageOf(error, 200) ? `: ${publicMessageOf(error, 200)}` : ""}.`;
          return reject(`${entry.candidate.source}: ${message}`, entry.index, { ...statuses[entry.index]!, status: "failed", registrations: [], error: message });
        }
        const applied = applySkillPatch(skill, patch);
        if (!applied.ok) {
          const message = `Skill transform ${JSON.stringify(transform.id)} returned an invalid patch for Skill ${JSON.stringify(skill.id)}: ${applied.message}.`;
          return reject(`${entry.candidate.source}: ${message}`, entry.index, { ...statuses[entry.index]!, status: "failed", registrations: [], error: message });
        }
        next.push(applied.value);
      }
      skills = next;
    }
  }

  const defaultOwner = accepted.find((entry) => entry.plugin.contributions.defaultAgent !== undefined);
  const agents: PluginAgentLayer = Object.freeze({
    agents: freezeAll(accepted.flatMap((entry) => entry.plugin.contributions.agents.map((agent) => Object.freeze(agent.entry)))),
    ...(defaultOwner ? { defaultAgent: { agent: defaultOwner.plugin.contributions.defaultAgent!, pluginId: defaultOwner.plugin.pluginId } } : {}),
  });
  let agentCatalog: AgentCatalog | undefined;
  if (options.agentCatalog) {
    const catalog = options.agentCatalog(agents);
    if (!catalog.ok) {
      const message = describeAgentCatalogError(catalog.error);
      const owner = accepted.find((entry) => catalog.error.file === `plugin:${entry.plugin.pluginId}`) ?? defaultOwner ?? accepted[0];
      if (owner) return reject(message, owner.index, { ...statuses[owner.index]!, status: "failed", registrations: [], error: message });
      return { ok: false, message, plugins: statuses };
    }
    agentCatalog = catalog.value;
  }

  const journals = new Map<string, PluginJournal>();
  const hooks = new HookPipeline();
  const tools: PluginToolDefinition[] = [];
  for (const { plugin } of accepted) {
    const journal = new PluginJournal(plugin.pluginId, plugin.contributions.journalKinds, options.journal);
    journals.set(plugin.pluginId, journal);
    for (const declaration of plugin.contributions.tools) tools.push(adaptTool(declaration, { pluginId: plugin.pluginId, reportJournal: (call, entry) => journal.report(call, entry) }));
    for (const hook of plugin.contributions.hooks) {
      const handler = hook.handler as (input: unknown) => unknown;
      // Handlers get owned copies: a plugin cannot change what Core holds.
      hooks.register(hook.name, (async (input: unknown) => handler(structuredClone(input))) as HookHandlers[typeof hook.name]);
    }
  }
  hooks.freeze();

  const closers: (PluginCleanup | undefined)[] = cleanups();
  let closing: Promise<void> | undefined;
  const generation: PluginGeneration = {
    id: generationId,
    activation: options.activation,
    plugins: freezeAll(statuses),
    tools: freezeAll(tools),
    agents,
    agentCatalog,
    skills: freezeAll(skills.map((skill) => Object.freeze(skill))),
    skillSources: freezeAll(accepted.flatMap((entry) => entry.plugin.contributions.skillSources.map((source) => Object.freeze({ pluginId: entry.plugin.pluginId, source })))),
    mcpServers: freezeAll(accepted.flatMap((entry) => entry.plugin.contributions.mcpServers.map((definition) => Object.freeze({ pluginId: entry.plugin.pluginId, definition })))),
    models: freezeAll(accepted.flatMap((entry) => entry.plugin.contributions.models.map((declaration) => Object.freeze({ pluginId: entry.plugin.pluginId, declaration })))),
    hooks,
    journals,
    subscribers: freezeAll(accepted.flatMap((entry) => entry.plugin.contributions.subscribers.map((handler) => Object.freeze({ pluginId: entry.plugin.pluginId, handler: handler as PluginSubscriber["handler"] })))),
    close: () =>
      (closing ??= (async () => {
        for (const cleanup of [...closers].reverse()) await runCleanup(cleanup, generationId, options.onDiagnostic);
      })()),
  };
  return { ok: true, generation: Object.freeze(generation) };
}

/**
 * A tool registry holding `base` (the built-in and Core tools) and the tools of each generation
 * (host, then a Session overlay), each plugin tool attributed to its plugin. Plugin tools'
 * `permissions` may return a promise: the Turn loop must await it.
 */
export function createToolRegistry(base: Readonly<Record<string, AnyToolDefinition>>, ...generations: readonly (PluginGeneration | undefined)[]): ToolRegistry {
  const registry = new ToolRegistry(base);
  for (const generation of generations) {
    for (const tool of generation?.tools ?? []) registry.register(tool as unknown as AnyToolDefinition, { kind: "plugin", pluginId: tool.pluginId });
  }
  return registry;
}

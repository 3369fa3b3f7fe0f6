// `plugin`: the plugin itself, its activation identity and the context `setup` receives.
import type { AgentDeclaration } from "./agent.js";
import type { HookHandler, HookName } from "./hook.js";
import type { JournalKindDeclaration } from "./journal.js";
import type { JsonObject } from "./json.js";
import type { McpServerDefinition } from "./mcp.js";
import type { ModelDeclaration } from "./model.js";
import type { TurnEvent } from "./session.js";
import type { SkillDeclaration, SkillSource, SkillTransform } from "./skill.js";
import type { ToolDeclaration } from "./tool.js";
import type { WebFetch } from "./web-fetch.js";
import type { WorkspaceFiles, WorkspaceShell } from "./workspace.js";

/** Where and for which plugin revision `setup` is running. */
export type PluginActivation =
  /** The host's shared baseline; its contributions apply to every Session. */
  | { readonly scope: "host"; readonly revision: { readonly id: string; readonly version: number } }
  /** One Session's overlay; its contributions add to the host's for that Session only. */
  | { readonly scope: "session"; readonly sessionId: string; readonly revision: { readonly id: string; readonly version: number } };

/**
 * The only argument to {@link Plugin.setup}. Register contributions while `setup` runs; Core
 * applies them once it settles. Each `register` checks the basic shape and throws a `PluginError`
 * at the call site; Core validates every contribution in full afterwards.
 */
export interface PluginContext {
  readonly activation: PluginActivation;
  /** This plugin's configured options as an owned JSON copy, or `{}`. */
  readonly options: JsonObject;
  /** The platform's global `fetch`, without host policy or limits. */
  readonly fetch: typeof fetch;
  readonly workspaceFiles: WorkspaceFiles;
  readonly workspaceShell: WorkspaceShell;
  readonly webFetch: WebFetch;
  readonly tools: {
    /** Tool IDs must be unique across the effective catalog; `skill` and `task` are reserved. */
    readonly register: (declaration: ToolDeclaration<never>) => void;
  };
  readonly agents: {
    readonly register: (declaration: AgentDeclaration) => void;
    /** One default per revision; a second call fails activation. */
    readonly setDefault: (agentId: string) => void;
  };
  readonly skills: {
    readonly register: (declaration: SkillDeclaration) => void;
    readonly registerSource: (source: SkillSource) => void;
    readonly registerTransform: (transform: SkillTransform) => void;
  };
  readonly mcp: {
    readonly register: (definition: McpServerDefinition) => void;
  };
  readonly models: {
    readonly register: (declaration: ModelDeclaration) => void;
  };
  readonly journal: {
    /** Registering the same kind twice fails activation. */
    readonly registerKind: (declaration: JournalKindDeclaration) => void;
  };
  readonly hooks: {
    /** An unknown hook name fails activation after `setup` returns. */
    readonly register: <TName extends HookName>(name: TName, handler: HookHandler<TName>) => void;
  };
  readonly events: {
    /** Observational and lossy: delivery runs off the Turn; a throw is ignored. */
    readonly subscribe: (handler: (event: TurnEvent) => void | Promise<void>) => void;
  };
}

/** Called once when the activation's scope closes. */
export type PluginCleanup = () => void | Promise<void>;

/** A trusted plugin: the module's default export. Core reads only `id` and `setup`. */
export interface Plugin {
  /** ≤ 128 characters `[a-z][a-z0-9]*([._-][a-z0-9]+)*`, unique within a revision. */
  readonly id: string;
  /** Registers contributions; returns nothing or a {@link PluginCleanup}. */
  readonly setup: (context: PluginContext) => void | PluginCleanup | Promise<void | PluginCleanup>;
}

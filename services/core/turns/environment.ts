// What a running Turn may draw on beyond storage and the model: the host's agent catalog, the
// Skills a workdir offers, and the sub-agent host that runs `task` calls. The host builds one
// environment and the runner hands it to every Turn; Turns never load catalogs themselves.
import type { AgentCatalog } from "../../workspace/agents.js";
import type { SkillDiscovery } from "../../workspace/skills.js";
import type { HookPipeline } from "../../plugins/hooks.js";
import type { TurnEventSink } from "./observe.js";
import type { SessionRow } from "../../storage/index.js";
import type { RegisteredTool, SubagentCapability, TerminalCapability, ToolRegistry } from "../../tools/index.js";

/** Runs `task` calls for one parent Turn (see `services/core/subagents`). */
export interface SubagentHost {
  /** The capability a parent Turn's `task` tool uses; `stop` is its abort signal. */
  forTurn(parent: { readonly server: string; readonly sessionId: string; readonly turnId: string; readonly model: string; readonly agents?: AgentCatalog | undefined }): SubagentCapability;
}

/** What a Turn leased from the plugin generations (the host's and its Session's overlay). */
export interface TurnExtensions {
  readonly tools: ToolRegistry;
  readonly hooks: HookPipeline;
  readonly agents: AgentCatalog;
  /** The Skills of the Turn's project (its configuration's `skills`); absent, the environment's. */
  readonly skills?: ((workdir: string) => Promise<SkillDiscovery>) | undefined;
  /** The MCP offer of the Turn's project and Session; absent, the environment's. */
  readonly mcp?: ((sessionId: string) => McpOffer | undefined) | undefined;
  /** Whether the Turn's project offers CodeMode's `execute`; absent, the environment's. */
  readonly codemode?: boolean | undefined;
  /** The plugins' event subscribers' queue for one Turn (`observerBufferSize` deep); absent when none subscribed. */
  readonly observe?: ((turnId: string) => TurnEventSink) | undefined;
  /** Ends the lease (the Turn settled). */
  release(): void;
}

export interface TurnEnvironment {
  /** The host's current agents (built-in, plugin, config and Markdown); a reload replaces them. */
  readonly agents: AgentCatalog;
  /** Leases the current plugin generations for one Turn; absent, the runner's tools and hooks serve every Turn. Rejects with a `_tag`/`code` error when the Session's overlay cannot be built. */
  readonly lease?: ((session: SessionRow) => Promise<TurnExtensions>) | undefined;
  /** The Skills a workdir offers (discovered once per workdir, until a reload). */
  skills(workdir: string): Promise<SkillDiscovery>;
  /** Where `task` calls run; absent, the `task` tool is not offered. */
  readonly subagents?: SubagentHost | undefined;
  /** Whether CodeMode's `execute` is offered (config `codemode.enabled`, default true). */
  readonly codemode?: boolean | undefined;
  /** The host's terminals, for `shell` calls with `tty: true`; absent, such a call fails `terminal_unavailable`. */
  readonly terminals?: TurnTerminals | undefined;
  /** The MCP servers' tools (`<server>_<tool>`) and handshake instructions right now for a Turn of `sessionId` (the host's, plus any attached to that Session alone); absent when none are loaded. */
  readonly mcp?: ((sessionId: string) => McpOffer | undefined) | undefined;
}

/** The host's terminals as one tool call reaches them (its PTYs carry the call as their origin). */
export interface TurnTerminals {
  forCall(call: { readonly server: string; readonly sessionId: string; readonly turnId: string; readonly toolCallId: string }): TerminalCapability;
}

/** What the connected MCP servers offer a starting Turn. */
export interface McpOffer {
  readonly tools: readonly RegisteredTool[];
  readonly instructions: readonly { readonly server: string; readonly text: string }[];
}

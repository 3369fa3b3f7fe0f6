// The tool registry: every tool a Turn may be offered — the built-in tools now, plugin and MCP
// tools as they register later — by id. The loop asks it once per model request for the tools of
// that request: the agent's selection (all tools when it names none), minus the tools the
// effective permission rules deny outright (the caller's `hidden` predicate: this room does not
// know the rule engine), in registration order.
import type { AnyToolDefinition } from "./tool.js";

/** Where a tool came from (later: a plugin or an MCP server). */
export type ToolSource = { readonly kind: "builtin" } | { readonly kind: "plugin"; readonly pluginId: string } | { readonly kind: "mcp"; readonly server: string };

export interface RegisteredTool {
  readonly tool: AnyToolDefinition;
  readonly source: ToolSource;
}

export interface ToolSelection {
  /** Tool ids the agent may use; absent means every registered tool. */
  readonly allow?: readonly string[] | undefined;
  /** True for a tool the effective rules deny for every use (it is not offered to the model). */
  readonly hidden?: ((toolId: string) => boolean) | undefined;
}

export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(initial: Readonly<Record<string, AnyToolDefinition>> = {}) {
    for (const tool of Object.values(initial)) this.register(tool);
  }

  /** Adds a tool; an id already registered is refused (ids are unique among tools loaded together). */
  register(tool: AnyToolDefinition, source: ToolSource = { kind: "builtin" }): void {
    if (this.tools.has(tool.id)) throw new Error(`A tool named ${JSON.stringify(tool.id)} is already registered`);
    this.tools.set(tool.id, { tool, source });
  }

  get(id: string): AnyToolDefinition | undefined {
    return this.tools.get(id)?.tool;
  }

  /** Every registered tool, in registration order. */
  list(): RegisteredTool[] {
    return [...this.tools.values()];
  }

  /** The tools one model request offers, by id, in registration order. */
  select(selection: ToolSelection = {}): Map<string, AnyToolDefinition> {
    const allowed = selection.allow ? new Set(selection.allow) : undefined;
    const out = new Map<string, AnyToolDefinition>();
    for (const { tool } of this.tools.values()) {
      if (allowed && !allowed.has(tool.id)) continue;
      if (selection.hidden?.(tool.id)) continue;
      out.set(tool.id, tool);
    }
    return out;
  }
}

// `mcp`: MCP server definitions a plugin registers; Core owns connections and credentials.

/** `unlimited`, or `finite` with a positive safe-integer `value`. */
export type ExecutionLimit = { readonly kind: "unlimited" } | { readonly kind: "finite"; readonly value: number };

/** Names a credential the host resolves when it connects; `reference` is 1 to 256 characters. */
export type McpCredentialReference = {
  readonly kind: "environment" | "secret" | "oauth";
  readonly reference: string;
};

export interface McpLimits {
  readonly startupMs: ExecutionLimit;
  readonly catalogMs: ExecutionLimit;
  readonly executionMs: ExecutionLimit;
}

export type McpReconnectPolicy = { readonly kind: "manual" } | { readonly kind: "retry"; readonly delayMs: number; readonly maxAttempts: ExecutionLimit };

/** Core supports none of these, so every field must be `false`. */
export interface McpClientCapabilities {
  readonly roots: false;
  readonly sampling: false;
  readonly elicitation: false;
}

interface McpCommonServerDefinition {
  /** ≤ 128 characters `[a-z][a-z0-9]*([._-][a-z0-9]+)*`. */
  readonly id: string;
  /** Same rules as `id`; tools appear as `<name>_<tool>`. */
  readonly name: string;
  readonly enabled?: boolean | undefined;
  readonly order?: number | undefined;
  readonly resourceReadTool?: boolean | undefined;
  /** Currently only `2025-06-18`. */
  readonly protocolVersions: readonly [string, ...string[]];
  readonly clientCapabilities?: McpClientCapabilities | undefined;
  readonly limits?: McpLimits | undefined;
  readonly reconnect?: McpReconnectPolicy | undefined;
}

/** An MCP server registered with `context.mcp.register`. */
export type McpServerDefinition =
  | (McpCommonServerDefinition & {
      readonly kind: "local";
      readonly transport: {
        readonly kind: "stdio";
        readonly command: string;
        readonly arguments: readonly string[];
        readonly environment: Readonly<Record<string, McpCredentialReference>>;
      };
    })
  | (McpCommonServerDefinition & {
      readonly kind: "remote";
      readonly transport: {
        readonly kind: "streamable-http";
        readonly endpoint: string;
        readonly headers: Readonly<Record<string, McpCredentialReference>>;
        readonly oauth?: McpCredentialReference | undefined;
      };
    });

// The TypeScript shape of a validated `ze-harness.config.json`.
//
// Hand-written ONCE as a mirror of spec/config.tsp: no generator in this stack turns the
// JSON Schema bundle into TypeScript (hey-api reads only the OpenAPI document, and the
// config models are deliberately kept out of it). Values of this type only ever come from
// `validateConfig`, which checks them against generated/config.schema.json, so the schema
// stays the authority; tests/config/validate.test.ts keeps a fully populated sample of this
// type passing that schema. When spec/config.tsp changes, change this file with it.

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** No limit. */
export interface UnlimitedLimit {
  readonly kind: "unlimited";
}

/** A limit: unlimited or a positive finite value (`value` ≥ 1, an integer). */
export type Limit = UnlimitedLimit | { readonly kind: "finite"; readonly value: number };

/** A count limit: unlimited or a finite value (`value` ≥ 0, an integer). */
export type CountLimit = UnlimitedLimit | { readonly kind: "finite"; readonly value: number };

export type PermissionEffect = "allow" | "ask" | "deny";

/** One ordered permission rule. The last matching rule wins. */
export interface PermissionRule {
  readonly action: string;
  readonly resource: string;
  readonly effect: PermissionEffect;
}

export type AgentMode = "primary" | "subagent" | "all";

/** An agent definition, or a patch of the built-in or plugin agent with the same ID. */
export interface AgentConfig {
  readonly displayName?: string;
  readonly description?: string;
  readonly system?: string;
  readonly model?: string;
  readonly mode?: AgentMode;
  readonly permissions?: readonly PermissionRule[];
  readonly disabled?: boolean;
}

export type CredentialReference =
  | { readonly kind: "environment"; readonly reference: string }
  | { readonly kind: "secret"; readonly reference: string }
  | OAuthCredentialReference;

export interface OAuthCredentialReference {
  readonly kind: "oauth";
  readonly reference: string;
}

export interface McpLimits {
  readonly startupMs: Limit;
  readonly catalogMs: Limit;
  readonly executionMs: Limit;
}

export type McpReconnect =
  | { readonly kind: "manual" }
  | { readonly kind: "retry"; readonly delayMs: number; readonly maxAttempts: Limit };

interface McpServerFields {
  readonly id: string;
  readonly name: string;
  readonly enabled?: boolean;
  readonly order?: number;
  readonly resourceReadTool?: boolean;
  readonly protocolVersions?: readonly string[];
  readonly clientCapabilities?: { readonly roots: false; readonly sampling: false; readonly elicitation: false };
  readonly limits?: McpLimits;
  readonly reconnect?: McpReconnect;
}

export interface LocalMcpServer extends McpServerFields {
  readonly kind: "local";
  readonly transport: {
    readonly kind: "stdio";
    readonly command: string;
    readonly arguments?: readonly string[];
    readonly environment?: { readonly [name: string]: CredentialReference };
  };
}

export interface RemoteMcpServer extends McpServerFields {
  readonly kind: "remote";
  readonly transport: {
    readonly kind: "streamable-http";
    readonly endpoint: string;
    readonly headers?: { readonly [name: string]: CredentialReference };
    readonly oauth?: OAuthCredentialReference;
  };
}

export type McpServer = LocalMcpServer | RemoteMcpServer;

/** A plugin with options. */
export interface PluginEntry {
  readonly source: string;
  readonly options?: { readonly [key: string]: JsonValue };
  readonly enabled?: boolean;
}

/** A plugin source string, or a plugin with options. */
export type PluginDeclaration = string | PluginEntry;

/** A provider entry with overrides. */
export interface ProviderConfig {
  readonly options?: { readonly [key: string]: JsonValue };
  readonly enabled?: boolean;
  readonly base?: string;
  readonly via?: string;
  /** Free-form here; the providers service checks it. */
  readonly definition?: unknown;
}

/** `true` enables a catalog provider with defaults; an object configures it. */
export type ProviderEntry = boolean | ProviderConfig;

export type RetryPacing =
  | { readonly kind: "none" }
  | { readonly kind: "fixed"; readonly delayMs: number }
  | { readonly kind: "exponential"; readonly initialDelayMs: number; readonly maximumDelayMs: number; readonly jitter: boolean };

/** The contents of `config.json` (global) and `ze-harness.config.json` (project). */
export interface Config {
  readonly $schema?: string;
  readonly model?: string;
  readonly agents?: { readonly [id: string]: AgentConfig };
  readonly defaultAgent?: string;
  readonly mcp?: readonly McpServer[];
  readonly plugins?: readonly PluginDeclaration[];
  readonly skills?: readonly string[];
  readonly providers?: { readonly [id: string]: ProviderEntry };
  readonly observerBufferSize?: number;
  readonly contentFlushMillis?: number;
  readonly codemode?: { readonly enabled?: boolean };
  readonly steering?: { readonly maxBatches?: CountLimit };
  readonly subagents?: { readonly maxDepth?: CountLimit };
  readonly permissions?: readonly PermissionRule[];
  readonly permissionMatching?: { readonly caseSensitive?: boolean };
  readonly approval?: { readonly timeoutMs?: Limit };
  readonly timeouts?: { readonly turnMs?: Limit };
  readonly provider?: {
    readonly maxAttempts?: Limit;
    readonly attemptTimeoutMs?: Limit;
    readonly elapsedMs?: Limit;
    readonly pacing?: RetryPacing;
  };
  readonly context?: { readonly safetyReserveUnits?: number };
  readonly images?: { readonly maxBase64Bytes?: Limit };
  readonly sandbox?: SandboxConfig;
  readonly workspace?: WorkspaceConfig;
}

/** The OS sandbox (spec/config.tsp `SandboxConfig`; services/sandbox). */
export interface SandboxConfig {
  readonly mode?: "workspace-write" | "read-only" | "off";
  readonly network?: boolean | readonly string[];
}

/** How Turns' workdir changes are recorded (spec/config.tsp `WorkspaceConfig`; services/core/rewind). */
export interface WorkspaceConfig {
  readonly recording?: "repository" | "tools" | "off";
}

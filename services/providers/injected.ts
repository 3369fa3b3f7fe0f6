// Injected-only credentials (`credentialMode: 'injected-only'`, the reference's injected-host
// mode): the host takes provider keys only from its embedder — a per-acquisition resolver port
// and an in-memory slot the embedder writes (the SDK's `setProviderCredential`, or the provider
// connection routes of `serve --injected-host`) — never from auth.json, a configured
// `options.apiKey` or the environment. The store is bound to the host's environment object,
// which every room already receives: `authFileLocation(env)` then names the slot instead of the
// file (auth-file.ts reads and writes it there), and `loadCredentialSources` reads no variable.
// Keys live in memory only: never persisted, never logged, gone when the host closes.
import type { Env } from "../config/paths.js";

/** The host's source of provider keys. */
export type CredentialMode = "ambient" | "injected-only";

/** Asked at every model acquisition; `undefined` or a blank key falls through to the slot. */
export type ProviderCredentialResolver = (request: { readonly providerId: string; readonly sessionId?: string }) => string | undefined | Promise<string | undefined>;

/** The embedder's provider credential port: initial keys by provider id, a resolver, or both. */
export type ProviderCredentialsPort =
  | Readonly<Record<string, string>>
  | ProviderCredentialResolver
  | { readonly keys?: Readonly<Record<string, string>>; readonly resolve?: ProviderCredentialResolver };

/** Resolves MCP `secret` references (`{ kind: "secret", reference }`). */
export type McpSecretResolver = (reference: string) => string | undefined | Promise<string | undefined>;
/** Supplies the access token of an MCP `oauth` reference (no stored OAuth lifecycle in injected-only mode). */
export type McpOAuthTokenResolver = (reference: string) => Promise<string | undefined>;

export interface InjectedCredentialOptions {
  readonly providerCredentials?: ProviderCredentialsPort | undefined;
  readonly mcpCredentialResolver?: McpSecretResolver | undefined;
  readonly mcpOAuthTokenResolver?: McpOAuthTokenResolver | undefined;
}

const VISIBLE_KEY = /^[\x21-\x7e]{1,8192}$/;

/** The in-memory slot and the ports of one injected-only host. */
export class InjectedCredentials {
  /** auth.json's shape, in memory: `{ [providerId]: { type: "api", key, … } }`. */
  #raw: Record<string, unknown> = {};
  #modifiedAt = 0;
  readonly resolver: ProviderCredentialResolver | undefined;
  readonly mcpSecret: McpSecretResolver | undefined;
  readonly mcpOAuth: McpOAuthTokenResolver | undefined;

  constructor(options: InjectedCredentialOptions = {}) {
    const port = options.providerCredentials;
    let keys: Readonly<Record<string, string>> | undefined;
    if (typeof port === "function") this.resolver = port;
    else if (port !== undefined && ("keys" in port || "resolve" in port) && (typeof port["resolve"] === "function" || typeof port["keys"] === "object")) {
      const shaped = port as { keys?: Readonly<Record<string, string>>; resolve?: ProviderCredentialResolver };
      keys = shaped.keys;
      this.resolver = shaped.resolve;
    } else keys = port as Readonly<Record<string, string>> | undefined;
    for (const [providerId, key] of Object.entries(keys ?? {})) {
      if (typeof key !== "string" || !VISIBLE_KEY.test(key)) throw new TypeError(`providerCredentials.${providerId}: a key must be 1–8192 visible ASCII characters`);
      this.set(providerId, key);
    }
    this.mcpSecret = options.mcpCredentialResolver;
    this.mcpOAuth = options.mcpOAuthTokenResolver;
  }

  /** Writes (replaces) one provider's key; takes effect at its next model acquisition. */
  set(providerId: string, key: string): void {
    const now = Date.now();
    this.replace({ ...this.#raw, [providerId]: { type: "api", key, connectionId: `injected:${providerId}`, label: providerId, createdAt: now, updatedAt: now } });
  }

  has(providerId: string): boolean {
    return Object.hasOwn(this.#raw, providerId);
  }

  remove(providerId: string): void {
    const { [providerId]: _removed, ...rest } = this.#raw;
    this.replace(rest);
  }

  /** What auth-file.ts reads in place of the file. */
  read(): { readonly raw: Record<string, unknown>; readonly modifiedAt: number } {
    return { raw: this.#raw, modifiedAt: this.#modifiedAt };
  }

  /** What auth-file.ts writes in place of the file. */
  replace(raw: Record<string, unknown>): void {
    this.#raw = { ...raw };
    this.#modifiedAt = Date.now();
  }
}

const bound = new WeakMap<object, InjectedCredentials>();

/** Makes `env` (the host's environment object) an injected-only host's. */
export function bindInjectedCredentials(env: Env, credentials: InjectedCredentials): void {
  bound.set(env, credentials);
}

/** The injected store of the host whose environment object this is, if it runs injected-only. */
export function injectedCredentialsOf(env: Env): InjectedCredentials | undefined {
  return bound.get(env);
}

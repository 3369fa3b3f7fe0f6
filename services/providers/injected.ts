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

/** The Session work a model acquisition serves (`resolveProviderCredential`'s `scope`). */
export type ProviderCredentialScope =
  | { readonly kind: "turn"; readonly sessionId: string; readonly turnId: string }
  | { readonly kind: "compaction"; readonly sessionId: string; readonly compactionId: string }
  | { readonly kind: "detached"; readonly sessionId: string; readonly turnId?: string };

/** A scoped resolver's answer: a key for this acquisition, a denial, or `undefined` (fall through to the slot). */
export type ProviderCredentialAnswer = { readonly apiKey: string } | { readonly denied: string; readonly code?: string } | undefined;

/**
 * Asked at every model acquisition that serves Session work, naming that work; a Turn asks once
 * (its answer is kept for the Turn's later model calls). `{ denied }` fails the acquisition.
 */
export type ScopedProviderCredentialResolver = (request: { readonly providerId: string; readonly scope: ProviderCredentialScope }) => ProviderCredentialAnswer | Promise<ProviderCredentialAnswer>;

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
  readonly resolveProviderCredential?: ScopedProviderCredentialResolver | undefined;
}

/** What a scoped acquisition uses: a key, a denial (safe text, checked code), or the slot. */
export type ScopedCredential = { readonly kind: "key"; readonly apiKey: string } | { readonly kind: "denied"; readonly message: string; readonly code?: string } | { readonly kind: "slot" };

const PROVIDER_CODE = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;
/** How many Turns' answers are kept (a Turn asks once; a restarted object asks again). */
const TURN_ANSWERS = 256;

const VISIBLE_KEY = /^[\x21-\x7e]{1,8192}$/;

/** The in-memory slot and the ports of one injected-only host. */
export class InjectedCredentials {
  /** auth.json's shape, in memory: `{ [providerId]: { type: "api", key, … } }`. */
  #raw: Record<string, unknown> = {};
  #modifiedAt = 0;
  readonly resolver: ProviderCredentialResolver | undefined;
  readonly mcpSecret: McpSecretResolver | undefined;
  readonly mcpOAuth: McpOAuthTokenResolver | undefined;
  readonly scoped: ScopedProviderCredentialResolver | undefined;
  /** Each recent Turn's answer per provider (insertion order: the oldest is dropped first). */
  readonly #turnAnswers = new Map<string, Promise<ScopedCredential>>();

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
    this.scoped = options.resolveProviderCredential;
  }

  /**
   * The scoped resolver's answer for one acquisition (once per Turn and provider). A resolver
   * throw becomes a denial naming only the provider; a code outside the provider-code shape is
   * dropped; `undefined` or a blank key falls through to the slot.
   */
  resolveScoped(providerId: string, scope: ProviderCredentialScope): Promise<ScopedCredential> {
    const resolver = this.scoped;
    if (resolver === undefined) return Promise.resolve({ kind: "slot" });
    const ask = async (): Promise<ScopedCredential> => {
      let answer: ProviderCredentialAnswer;
      try {
        answer = await resolver({ providerId, scope });
      } catch {
        return { kind: "denied", message: `The credential resolver failed for provider "${providerId}"` };
      }
      if (typeof answer !== "object" || answer === null) return { kind: "slot" };
      if ("denied" in answer) {
        const text = typeof answer.denied === "string" && answer.denied.trim() !== "" ? answer.denied.slice(0, 4096) : `The credential for provider "${providerId}" was denied`;
        const code = answer.code;
        return { kind: "denied", message: text, ...(typeof code === "string" && code.length <= 128 && PROVIDER_CODE.test(code) ? { code } : {}) };
      }
      const key = typeof answer.apiKey === "string" ? answer.apiKey.trim() : "";
      return key === "" ? { kind: "slot" } : { kind: "key", apiKey: key };
    };
    if (scope.kind !== "turn") return ask();
    const cacheKey = `${scope.turnId}\u0000${providerId}`;
    let answer = this.#turnAnswers.get(cacheKey);
    if (answer === undefined) {
      answer = ask();
      this.#turnAnswers.set(cacheKey, answer);
      if (this.#turnAnswers.size > TURN_ANSWERS) this.#turnAnswers.delete(this.#turnAnswers.keys().next().value!);
    }
    return answer;
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

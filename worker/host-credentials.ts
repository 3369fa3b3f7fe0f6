// Runtime provider credentials of an injected-only WorkerHarnessHost (the reference's "Runtime
// provider credentials" and "Per-turn credentials"): the same Core seam as the Node SDK
// (services/providers/injected.ts). The host binds one `InjectedCredentials` to the model
// gateway's environment object, so every model acquisition reads the live in-memory slot (and asks
// the `resolveProviderCredential` resolver first, with the Session work it serves) instead of keys
// fixed at wake. The `providerKeys` port's answers seed the slot at wake. Keys live in memory only:
// never persisted, logged or answered; a restarted object starts with the seeds again.
import type { Env } from "../services/config/index.js";
import { bindInjectedCredentials, InjectedCredentials, type ScopedProviderCredentialResolver } from "../services/providers/injected.js";
import type { ProviderSet } from "../services/providers/index.js";
import type { ProviderKeys } from "./turns.js";

export type { ProviderCredentialAnswer, ProviderCredentialScope, ScopedProviderCredentialResolver } from "../services/providers/injected.js";

const VISIBLE_KEY = /^[\x21-\x7e]{1,8192}$/;

/** Why the credential options cannot be used (named, never their values), or undefined. */
export function credentialOptionsProblem(options: { readonly credentialMode?: string; readonly resolveProviderCredential?: unknown }): string | undefined {
  const resolver = options.resolveProviderCredential;
  if (resolver === undefined) return undefined;
  if (typeof resolver !== "function") return "resolveProviderCredential: must be a function";
  if (options.credentialMode !== "injected-only") return "resolveProviderCredential: needs credentialMode 'injected-only'";
  return undefined;
}

/**
 * The live slot of an injected-only host: created at construction (writes before the host is
 * ready wait for it), bound to the gateway's environment at wake and seeded from `providerKeys`.
 */
export class HostCredentials {
  readonly #store: InjectedCredentials;
  #providers: ProviderSet | undefined;

  constructor(resolver: ScopedProviderCredentialResolver | undefined) {
    this.#store = new InjectedCredentials(typeof resolver === "function" ? { resolveProviderCredential: resolver } : {});
  }

  /** Binds the slot to the gateway's environment and seeds it with the port's keys (not over a key already written). */
  async bind(env: Env, providers: ProviderSet, port: ProviderKeys | undefined): Promise<void> {
    this.#providers = providers;
    for (const provider of providers.providers) {
      if (this.#store.has(provider.id)) continue;
      const key = await port?.providerKeys(provider.id);
      if (typeof key === "string" && key.trim() !== "" && VISIBLE_KEY.test(key.trim())) this.#store.set(provider.id, key.trim());
    }
    bindInjectedCredentials(env, this.#store);
  }

  set(providerId: string, apiKey: string): void {
    this.#known(providerId);
    if (typeof apiKey !== "string" || !VISIBLE_KEY.test(apiKey)) throw validation("an API key must be 1–8192 visible ASCII characters");
    this.#store.set(providerId, apiKey);
  }

  has(providerId: string): boolean {
    return typeof providerId === "string" && this.#providers?.provider(providerId) !== undefined && this.#store.has(providerId);
  }

  remove(providerId: string): void {
    this.#known(providerId);
    this.#store.remove(providerId);
  }

  #known(providerId: string): void {
    if (typeof providerId !== "string" || this.#providers?.provider(providerId) === undefined) {
      throw Object.assign(new Error(`Provider ${JSON.stringify(String(providerId)).slice(0, 140)} is not configured on this host`), { _tag: "NotFoundError", name: "NotFoundError" });
    }
  }
}

/** The port asked at most once per provider (a failed answer is asked again). */
export function memoizedKeys(port: ProviderKeys): ProviderKeys {
  const answers = new Map<string, Promise<string | undefined>>();
  return {
    providerKeys(providerId) {
      let answer = answers.get(providerId);
      if (answer === undefined) {
        answer = port.providerKeys(providerId);
        answers.set(providerId, answer);
        answer.catch(() => answers.delete(providerId));
      }
      return answer;
    },
  };
}

const validation = (message: string): Error & { _tag: string } => Object.assign(new Error(message), { _tag: "ValidationError", name: "ValidationError" });

/** The error the credential methods throw on a host that is not injected-only. */
export const notInjected = (): Error & { _tag: string } => validation("provider credentials are written only on an injected-only host (credentialMode: 'injected-only')");

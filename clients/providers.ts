// Typed provider management over the generated SDK: safe summaries, API-key connections and
// host-held logins. Every helper returns the contract's data or throws a ZeClientError (the
// encoded error), like `unwrap`. Nothing here sees a credential after `connectProviderKey` sent it.
import * as sdk from "../generated/client/sdk.gen.js";
import type {
  ProviderLogin,
  SafeProviderConnection,
  SafeProviderSummary,
} from "../generated/client/types.gen.js";
import { unwrap, type ZeClient } from "./client.js";

/** Every provider this host compiled, with availability, credential source, connection and login methods. */
export async function listProviders(client: ZeClient): Promise<SafeProviderSummary[]> {
  return (await unwrap(sdk.providers({ client: client.client }))).providers;
}

export async function getProvider(client: ZeClient, providerId: string): Promise<SafeProviderSummary> {
  return (await unwrap(sdk.getProvider({ client: client.client, path: { providerId } }))).provider;
}

/** Stores `apiKey` as the provider's connection, replacing any previous one atomically. */
export async function connectProviderKey(client: ZeClient, providerId: string, input: { readonly apiKey: string; readonly label?: string }): Promise<SafeProviderConnection> {
  const body = { apiKey: input.apiKey, ...(input.label !== undefined ? { label: input.label } : {}) };
  return (await unwrap(sdk.connectProviderKey({ client: client.client, path: { providerId }, body }))).connection;
}

export async function updateProviderConnection(client: ZeClient, providerId: string, connectionId: string, input: { readonly label: string }): Promise<SafeProviderConnection> {
  return (await unwrap(sdk.updateProviderConnection({ client: client.client, path: { providerId, connectionId }, body: { label: input.label } }))).connection;
}

export async function deleteProviderConnection(client: ZeClient, providerId: string, connectionId: string): Promise<boolean> {
  return (await unwrap(sdk.deleteProviderConnection({ client: client.client, path: { providerId, connectionId } }))).success;
}

/** Starts a host-held login (cancelling the provider's pending one); show `prompt` to the user. */
export async function startProviderLogin(client: ZeClient, providerId: string, input: { readonly methodId?: string } = {}): Promise<ProviderLogin> {
  return unwrap(sdk.startProviderLogin({ client: client.client, path: { providerId }, body: input.methodId !== undefined ? { methodId: input.methodId } : {} }));
}

/** The login's status now, or once it changes within `waitMs` (the host waits at most 30 s). */
export async function getProviderLogin(client: ZeClient, providerId: string, loginId: string, options: { readonly waitMs?: number } = {}): Promise<ProviderLogin> {
  const query = options.waitMs !== undefined ? { waitMs: String(Math.max(0, Math.floor(options.waitMs))) } : undefined;
  return unwrap(sdk.getProviderLogin({ client: client.client, path: { providerId, loginId }, ...(query !== undefined ? { query } : {}) }));
}

export interface WaitProviderLoginOptions {
  /** Stops waiting (the login keeps running on the host; cancel it with cancelProviderLogin). */
  readonly signal?: AbortSignal;
  /** Each long-poll's wait, at most 30000 (default). */
  readonly pollMs?: number;
}

/** Long-polls until the login is `connected` or `failed`, and resolves with that status. */
export async function waitProviderLogin(client: ZeClient, providerId: string, loginId: string, options: WaitProviderLoginOptions = {}): Promise<Exclude<ProviderLogin, { status: "pending" }>> {
  for (;;) {
    options.signal?.throwIfAborted();
    const login = await getProviderLogin(client, providerId, loginId, { waitMs: options.pollMs ?? 30_000 });
    if (login.status !== "pending") return login;
  }
}

/** Cancels a pending login; a settled one is returned as it is. */
export async function cancelProviderLogin(client: ZeClient, providerId: string, loginId: string): Promise<ProviderLogin> {
  return unwrap(sdk.cancelProviderLogin({ client: client.client, path: { providerId, loginId } }));
}

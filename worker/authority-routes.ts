// The gateway's runtime model and provider routes over the provider authority's RPC (binding
// HARNESS_PROVIDER_AUTHORITY): `models`, `modelEvents` (one `models.revision` event, then the
// stream closes, as on Node), `refreshProviderModels` (discovery again), `providers`,
// `getProvider`, `connectProviderKey`,
// `updateProviderConnection` and `deleteProviderConnection`. The generated Fetch handler decodes
// each request once; the authority's typed failures become protocol errors here. Logins stay
// the typed "unsupported" answer (unavailable.ts). Also the server objects' key seam,
// `authorityProviderKeys(env)`.
import type { Handlers, SseMessage } from "../generated/server/routes.js";
import type { ModelRevisionEvent } from "../generated/client/types.gen.js";
import { Failure, notFound, unavailable, validationFailure } from "../services/contract/failure.js";
import type { RequestContext } from "../services/http/handler.js";
import { Secret } from "../services/providers/secret.js";
import { AUTHORITY_BINDING, AUTHORITY_NAME, type AuthorityError, type AuthorityNamespace, type AuthorityResult, type ProviderAuthorityRpc, type ProviderCredential } from "./authority-types.js";

type RuntimeOperations = Pick<
  Handlers<RequestContext>,
  "models" | "modelEvents" | "refreshProviderModels" | "providers" | "getProvider" | "connectProviderKey" | "updateProviderConnection" | "deleteProviderConnection"
>;

export interface AuthorityEnv {
  readonly HARNESS_PROVIDER_AUTHORITY?: AuthorityNamespace;
}

/** The authority's failure as the protocol error a client receives (never a credential). */
export function authorityFailure(error: AuthorityError): Failure {
  switch (error._tag) {
    case "ProvidersEmpty":
    case "ProviderInvalid":
    case "ProvidersMalformed":
      return unavailable(`Provider configuration (HARNESS_PROVIDERS) is invalid: ${error.path}: ${error.message}`);
    case "ProviderNotFound":
      return notFound("provider", error.message);
    case "ConnectionNotFound":
      return notFound("connection", error.message);
    case "InvalidInput":
      return validationFailure(error.message);
  }
}

/** The singleton authority's stub. */
export function authorityOf(env: AuthorityEnv): ProviderAuthorityRpc {
  const namespace = env.HARNESS_PROVIDER_AUTHORITY;
  if (namespace === undefined) throw unavailable(`provider management is unavailable: the ${AUTHORITY_BINDING} Durable Object binding is not configured`);
  return namespace.get(namespace.idFromName(AUTHORITY_NAME));
}

/** One RPC: its value, or its typed failure thrown as a protocol error; a broken call is a 503. */
async function call<T>(env: AuthorityEnv, method: (authority: ProviderAuthorityRpc) => Promise<AuthorityResult<T>>): Promise<T> {
  const authority = authorityOf(env);
  let result: AuthorityResult<T>;
  try {
    result = await method(authority);
  } catch {
    // The platform's message may name internals; the client learns only that the call failed.
    throw unavailable("the provider authority could not be reached; try again");
  }
  if (!result.ok) throw authorityFailure(result.error);
  return result.value;
}

async function* once(hostRevision: string): AsyncGenerator<SseMessage<ModelRevisionEvent>> {
  yield { event: "models.revision", data: { type: "models.revision", hostRevision } };
}

export function authorityRuntimeHandlers(env: AuthorityEnv): RuntimeOperations {
  return {
    models: async () => ({ status: 200, body: await call(env, (authority) => authority.catalog()) }),
    modelEvents: async () => ({ status: 200, stream: once((await call(env, (authority) => authority.catalog())).hostRevision) }),
    refreshProviderModels: async ({ body }) => ({ status: 200, body: await call(env, (authority) => authority.refreshModels(body.providerId)) }),
    providers: async () => ({ status: 200, body: { providers: await call(env, (authority) => authority.listProviders()) } }),
    getProvider: async ({ path }) => ({ status: 200, body: { provider: await call(env, (authority) => authority.getProvider(path.providerId)) } }),
    connectProviderKey: async ({ path, body }) => ({
      status: 200,
      body: { connection: await call(env, (authority) => authority.connectKey(path.providerId, body.apiKey, body.label)) },
    }),
    updateProviderConnection: async ({ path, body }) => ({
      status: 200,
      body: { connection: await call(env, (authority) => authority.relabelConnection(path.providerId, path.connectionId, body.label)) },
    }),
    deleteProviderConnection: async ({ path }) => {
      await call(env, (authority) => authority.deleteConnection(path.providerId, path.connectionId));
      return { status: 200, body: { success: true } };
    },
  };
}

/** A provider's inference key as a runner needs it: the key (absent when the provider takes none), or why there is none. */
export type ProviderKey =
  | { readonly ok: true; readonly origin: "stored" | "environment" | "none" | "via"; readonly key?: Secret }
  | { readonly ok: false; readonly reason: Extract<ProviderCredential, { ok: false }>["reason"]; readonly message: string };

/**
 * The server objects' `providerKeys(providerId)` seam: one `providerCredentials()` RPC on first
 * use (a server runtime resolves its keys once, at initialization: a connection changed later
 * applies to servers initialized after it), then answers from that. A provider the authority
 * does not know is `missing_credentials`; an unusable authority rejects with a protocol error.
 */
export function authorityProviderKeys(env: AuthorityEnv): (providerId: string) => Promise<ProviderKey> {
  let loaded: Promise<Readonly<Record<string, ProviderCredential>>> | undefined;
  const load = (): Promise<Readonly<Record<string, ProviderCredential>>> => {
    loaded ??= call(env, (authority) => authority.providerCredentials()).then((credentials) => credentials.providers);
    // A failed load is not kept: the next Turn asks again.
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
  return async (providerId) => {
    const providers = await load();
    const credential = Object.hasOwn(providers, providerId) ? providers[providerId]! : undefined;
    if (credential === undefined) return { ok: false, reason: "missing_credentials", message: `Provider "${providerId}" is not configured on this host` };
    if (!credential.ok) return credential;
    return { ok: true, origin: credential.origin, ...(credential.key !== undefined ? { key: new Secret(credential.key) } : {}) };
  };
}

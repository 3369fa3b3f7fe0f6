// Binds the contract's provider operations to services/providers: safe summaries (`providers`,
// `getProvider`), API-key connections in the global auth.json (`connectProviderKey`,
// `updateProviderConnection`, `deleteProviderConnection`) and host-held logins
// (`startProviderLogin`, `getProviderLogin` with its `waitMs` long-poll, `cancelProviderLogin`).
// Every response carries metadata only — never a credential, device code or token. Bad input is a
// typed error that changes nothing: the input is checked before auth.json is touched.
import type { Handlers } from "../../generated/server/routes.js";
import type { Env } from "../config/index.js";
import { forbidden, notFound, unavailable, validationFailure, type Failure } from "../contract/failure.js";
import type { RequestContext } from "../http/handler.js";
import {
  MAX_WAIT_MS,
  authFileLocation,
  connectApiKey,
  deleteConnection,
  loadCredentialSources,
  providerSummaries,
  providerSummary,
  readAuthFile,
  relabelConnection,
  requiresCredential,
  type AuthFileError,
  type LoginManager,
  type ProviderSet,
  type ResolvedProvider,
} from "../providers/index.js";

type ProviderOperations = Pick<
  Handlers<RequestContext>,
  | "providers"
  | "getProvider"
  | "connectProviderKey"
  | "updateProviderConnection"
  | "deleteProviderConnection"
  | "startProviderLogin"
  | "getProviderLogin"
  | "cancelProviderLogin"
>;

export interface ProviderHandlerServices {
  /** The host's compiled providers (undefined when the host runs without the provider gateway). */
  readonly providers: () => ProviderSet | undefined;
  readonly env: Env;
  readonly logins: LoginManager;
  readonly now?: () => number;
}

/** An API key goes into one Authorization header: visible ASCII, no spaces or control characters. */
const API_KEY = /^[\x21-\x7e]{1,8192}$/;
/** A label is free text without control characters. */
const LABEL = /^[^\x00-\x1f\x7f]{1,256}$/;

function authFailure(error: AuthFileError | { readonly _tag: "ConnectionNotFound"; readonly message: string }): Failure {
  switch (error._tag) {
    case "ConnectionNotFound":
      return notFound("connection", error.message);
    case "AuthFileReadOnly":
      return forbidden(`Provider connections cannot be changed: ${error.message}`);
    case "AuthFileInvalid":
      return unavailable(`Provider connections are unavailable: ${error.message} (${error.file}); fix or remove it`);
    case "AuthFileUnavailable":
      return unavailable(`Provider connections are unavailable: ${error.message} (${error.file})`);
  }
}

function checkLabel(label: string | undefined, field: string): string | undefined {
  if (label === undefined) return undefined;
  if (!LABEL.test(label) || label.trim() === "") throw validationFailure(`Invalid request: ${field}: must be 1–256 characters, not only spaces, without control characters`);
  return label;
}

function parseWait(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d{1,9}$/.test(value)) throw validationFailure(`Invalid request: query.waitMs: must be a non-negative integer of milliseconds (at most ${MAX_WAIT_MS} are waited)`);
  return Math.min(Number(value), MAX_WAIT_MS);
}

export function providerHandlers(services: ProviderHandlerServices): ProviderOperations {
  const now = services.now ?? Date.now;
  const location = () => authFileLocation(services.env);
  const set = (): ProviderSet => {
    const providers = services.providers();
    if (providers === undefined) throw unavailable("provider management is unavailable: this host runs without the provider gateway");
    return providers;
  };
  const provider = (providerId: string): ResolvedProvider => {
    const found = set().provider(providerId);
    if (found === undefined) throw notFound("provider", `Provider "${providerId}" is not configured on this host`);
    return found;
  };
  const login = (providerId: string, loginId: string) => {
    provider(providerId);
    return (found: ReturnType<LoginManager["cancel"]>) => {
      if (found === undefined) throw notFound("provider_login", `Provider "${providerId}" has no login ${loginId}`);
      return { status: 200 as const, body: found };
    };
  };

  return {
    providers: async () => ({ status: 200, body: { providers: providerSummaries(set(), await loadCredentialSources(services.env)) } }),

    getProvider: async ({ path }) => ({ status: 200, body: { provider: providerSummary(provider(path.providerId), await loadCredentialSources(services.env)) } }),

    connectProviderKey: async ({ path, body }) => {
      const target = provider(path.providerId);
      if (!API_KEY.test(body.apiKey)) {
        throw validationFailure("Invalid request: body.apiKey: must be 1–8192 visible ASCII characters (no spaces, line breaks or control characters)");
      }
      const label = checkLabel(body.label, "body.label");
      if (target.via !== undefined) throw validationFailure(`Invalid request: provider "${target.id}" takes its key via "${target.via}"; connect "${target.via}" instead`);
      if (!requiresCredential(target)) throw validationFailure(`Invalid request: provider "${target.id}" authenticates with no credential; there is no key to connect`);
      const connected = await connectApiKey(location(), target.id, body.apiKey, label, now());
      if (!connected.ok) throw authFailure(connected.error);
      return { status: 200, body: { connection: connected.value } };
    },

    updateProviderConnection: async ({ path, body }) => {
      const target = provider(path.providerId);
      const label = checkLabel(body.label, "body.label")!;
      const updated = await relabelConnection(location(), target.id, path.connectionId, label, now());
      if (!updated.ok) throw authFailure(updated.error);
      return { status: 200, body: { connection: updated.value } };
    },

    deleteProviderConnection: async ({ path }) => {
      const target = provider(path.providerId);
      const deleted = await deleteConnection(location(), target.id, path.connectionId);
      if (!deleted.ok) throw authFailure(deleted.error);
      return { status: 200, body: { success: true } };
    },

    startProviderLogin: async ({ path, body }) => {
      const target = provider(path.providerId);
      if (body.methodId !== undefined && (body.methodId === "" || body.methodId.length > 128)) {
        throw validationFailure("Invalid request: body.methodId: must be 1–128 characters");
      }
      const where = location();
      if (where.memory !== undefined) throw forbidden("Provider logins are unavailable: this host takes credentials only from its embedder (injected-only); connect an API key instead");
      if (where.content !== undefined) throw authFailure({ _tag: "AuthFileReadOnly", file: where.path, message: "ZE_HARNESS_AUTH_CONTENT supplies the stored connections; a login cannot be stored" });
      // A login could never be stored in an unusable auth.json: refuse before contacting the provider.
      const readable = await readAuthFile(where);
      if (!readable.ok) throw authFailure(readable.error);
      const started = await services.logins.start(target, body.methodId);
      if (!started.ok) {
        if (started.reason === "no_login") throw validationFailure(`Invalid request: provider "${target.id}" offers no login; connect an API key with \`ze-harness provider connect ${target.id}\``);
        throw validationFailure(`Invalid request: body.methodId: provider "${target.id}" offers the login methods ${started.methods.map((id) => `"${id}"`).join(", ")}`);
      }
      return { status: 200, body: started.login };
    },

    getProviderLogin: async ({ path, query }) => {
      const waitMs = parseWait(query?.waitMs);
      const answer = login(path.providerId, path.loginId);
      return answer(await services.logins.wait(path.providerId, path.loginId, waitMs));
    },

    cancelProviderLogin: async ({ path }) => {
      const answer = login(path.providerId, path.loginId);
      return answer(services.logins.cancel(path.providerId, path.loginId));
    },
  };
}

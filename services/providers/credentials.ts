// Credential resolution for one provider, in the order the reference gives Turn authentication:
// the configured `options.apiKey`, then the stored connection in `auth.json`, then each of the
// definition's environment variables. A provider that needs a credential and has none is
// unavailable with a clear reason — there is never a silent substitute (another provider, another
// key). Resolution returns `Secret`s only; summaries and errors carry names, never values.
import type { SafeProviderConnection } from "../../generated/client/types.gen.js";
import type { Env } from "../config/paths.js";
import { authFileLocation, readAuthFile, type AuthEntry, type AuthFileError, type ConnectionMetadata, type AuthFileLocation, type AuthState } from "./auth-file.js";
import { requiresCredential, type ProviderSet, type ResolvedModel, type ResolvedProvider } from "./registry.js";
import { Secret } from "./secret.js";
import { loginMethodsOf } from "./login/methods.js";
import { refreshDue, refreshable } from "./login/refresh.js";

/** Everything resolution reads, loaded once: the environment and the parsed auth file. */
export interface CredentialSources {
  readonly env: Env;
  /** The stored connections, or why the auth file could not be used (then nothing counts as stored). */
  readonly auth: AuthState | AuthFileError;
  /** Epoch ms used to judge OAuth expiry (defaults to now). */
  readonly now?: number;
  /** An injected-only host: configured keys and the environment count for nothing (injected.ts). */
  readonly injectedOnly?: boolean;
}

/** Reads `auth.json` (or `ZE_HARNESS_AUTH_CONTENT`) once for a batch of resolutions. */
export async function loadCredentialSources(env: Env, location: AuthFileLocation = authFileLocation(env)): Promise<CredentialSources> {
  const read = await readAuthFile(location);
  const auth = read.ok ? read.value : read.error;
  // Injected-only: the slot is the one source; no variable is read.
  return location.memory !== undefined ? { env: {}, auth, injectedOnly: true } : { env, auth };
}

/** Where a resolved credential came from. */
export type CredentialOrigin = "config" | "stored" | "environment" | "none" | "via";

export type CredentialResolution =
  | {
      readonly ok: true;
      readonly origin: CredentialOrigin;
      /** Absent for `origin: "none"` (the provider authenticates with nothing). */
      readonly secret?: Secret;
      /** The environment variable that supplied it. */
      readonly variable?: string;
    }
  | {
      readonly ok: false;
      readonly reason: "missing_credentials" | "reconnect_required" | "disabled" | "unsupported";
      /** Safe: names where a credential could come from, never a value. */
      readonly message: string;
    };

const isAuthState = (auth: CredentialSources["auth"]): auth is AuthState => !("_tag" in auth);

/** The provider's stored `auth.json` entry, when the file is usable and has one. */
export function storedEntry(provider: ResolvedProvider, sources: CredentialSources): AuthEntry | undefined {
  if (!isAuthState(sources.auth)) return undefined;
  return Object.hasOwn(sources.auth.entries, provider.id) ? sources.auth.entries[provider.id] : undefined;
}

function storedSecret(entry: AuthEntry, now: number): Secret | "expired" {
  if (entry.type === "api") return new Secret(entry.key);
  if (entry.type === "wellknown") return new Secret(entry.token);
  if (entry.refreshRejected === true) return "expired";
  // A login due for a refresh still counts while it can be refreshed: the gateway refreshes it
  // before the request (login/refresh.ts).
  return !refreshDue(entry, now) || refreshable(entry) ? new Secret(entry.access) : "expired";
}

function missingMessage(provider: ResolvedProvider): string {
  const ways = [
    `run \`ze-harness provider connect ${provider.id}\` (an API key)`,
    ...(loginMethodsOf(provider).length > 0 ? [`\`ze-harness provider login ${provider.id}\` (sign in)`] : []),
    ...(provider.environment.length > 0 ? [`set ${provider.environment.join(" or ")}`] : []),
    `or set providers.${provider.id}.options.apiKey`,
  ];
  return `Provider "${provider.id}" has no credential: ${ways.join(", ")}.`;
}

/** Resolves the credential a request to `provider` would carry. */
export function resolveCredential(provider: ResolvedProvider, sources: CredentialSources): CredentialResolution {
  if (!provider.enabled) return { ok: false, reason: "disabled", message: `Provider "${provider.id}" is disabled in the configuration.` };
  if (provider.via !== undefined) return resolveVia(provider, sources);
  if (!requiresCredential(provider)) return { ok: true, origin: "none" };
  if (provider.configuredKey !== undefined && sources.injectedOnly !== true) return { ok: true, origin: "config", secret: provider.configuredKey };
  let expired = false;
  const entry = storedEntry(provider, sources);
  if (entry !== undefined) {
    const secret = storedSecret(entry, sources.now ?? Date.now());
    if (secret !== "expired") return { ok: true, origin: "stored", secret };
    expired = true;
  }
  for (const variable of provider.environment) {
    const value = sources.env[variable];
    if (value !== undefined && value.trim() !== "") return { ok: true, origin: "environment", secret: new Secret(value.trim()), variable };
  }
  if (expired) {
    return {
      ok: false,
      reason: "reconnect_required",
      message: `Provider "${provider.id}" has an expired login: run \`ze-harness provider login ${provider.id}\` again.`,
    };
  }
  if (sources.injectedOnly === true) {
    return { ok: false, reason: "missing_credentials", message: `Provider "${provider.id}" has no injected credential: this host takes keys only from its embedder.` };
  }
  return { ok: false, reason: "missing_credentials", message: missingMessage(provider) };
}

/** A provider whose key its holder (`tap`) stores: the holder's sign-in authenticates its requests. */
function resolveVia(provider: ResolvedProvider, sources: CredentialSources): CredentialResolution {
  const holder = provider.holder;
  if (holder === undefined) return { ok: false, reason: "unsupported", message: `Provider "${provider.id}" authenticates via "${provider.via}", which is not configured.` };
  const name = holder.displayName;
  const inner = resolveCredential(holder, sources);
  if (inner.ok && inner.secret !== undefined) return { ok: true, origin: "via", secret: inner.secret };
  if (inner.ok) return { ok: false, reason: "unsupported", message: `Provider "${provider.id}" is routed via "${holder.id}", which has no sign-in to route it with.` };
  if (inner.reason === "disabled") return { ok: false, reason: "disabled", message: `Provider "${provider.id}" uses its key stored in ${name}, and ${name} is disabled in the configuration.` };
  if (inner.reason === "reconnect_required") {
    return { ok: false, reason: "reconnect_required", message: `Provider "${provider.id}" uses its key stored in ${name}, and your ${name} sign-in expired: run \`ze-harness provider login ${holder.id}\` again.` };
  }
  return {
    ok: false,
    reason: inner.reason,
    message: `Provider "${provider.id}" uses its key stored in ${name}, and you are not signed in to ${name}: run \`ze-harness provider login ${holder.id}\`.`,
  };
}

/** The connection ID of an entry written without Ze's metadata (by opencode, or by hand). */
export const legacyConnectionId = (providerId: string): string => `auth:${providerId}`;

/** The safe view of a stored connection (auth.json keeps opencode's shape, so metadata is derived). */
export function storedConnection(provider: ResolvedProvider, sources: CredentialSources): SafeProviderConnection | undefined {
  const entry = storedEntry(provider, sources);
  if (entry === undefined || !isAuthState(sources.auth)) return undefined;
  const expired = entry.type === "oauth" && storedSecret(entry, sources.now ?? Date.now()) === "expired";
  const metadata: ConnectionMetadata = entry.type === "wellknown" ? {} : entry;
  return {
    connectionId: metadata.connectionId ?? legacyConnectionId(provider.id),
    providerId: provider.id,
    label: metadata.label ?? provider.id,
    method: entry.type === "api" ? "api_key" : "oauth",
    status: expired ? "reconnect_required" : "ready",
    createdAt: metadata.createdAt ?? sources.auth.modifiedAt,
    updatedAt: metadata.updatedAt ?? metadata.createdAt ?? sources.auth.modifiedAt,
  };
}

export type OpenedModel =
  | { readonly ok: true; readonly model: ResolvedModel; readonly credential?: Secret }
  | {
      readonly ok: false;
      readonly reason: "unknown_model" | "missing_credentials" | "reconnect_required" | "disabled" | "unsupported";
      readonly message: string;
    };

/**
 * Turn setup: the model a ref names plus its provider's credential — or a loud failure. Never
 * substitutes another model or provider for a configured-but-unavailable ref.
 */
export function openModel(set: ProviderSet, ref: string, sources: CredentialSources): OpenedModel {
  const model = set.model(ref);
  if (model === undefined) {
    const provider = set.provider(ref.split("/", 1)[0] ?? "");
    if (provider !== undefined && !provider.enabled) return { ok: false, reason: "disabled", message: `Provider "${provider.id}" is disabled in the configuration.` };
    return { ok: false, reason: "unknown_model", message: `No configured provider offers the model "${ref}".` };
  }
  const provider = set.provider(model.providerId)!;
  const credential = resolveCredential(provider, sources);
  if (!credential.ok) return credential;
  return { ok: true, model, ...(credential.secret !== undefined ? { credential: credential.secret } : {}) };
}

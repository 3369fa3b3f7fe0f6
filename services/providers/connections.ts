// Stored provider connections: connect an API key, relabel, delete — each one serialized
// read-modify-write of the global auth.json (atomic 0600 replace; a non-object file is never
// overwritten; `ZE_HARNESS_AUTH_CONTENT` makes it read-only). Results carry the safe
// `SafeProviderConnection` only. A connection is identified by the `connectionId` Ze stores with
// the entry (a new one per connect or login); an entry another tool wrote is `auth:<providerId>`.
import { randomUUID } from "node:crypto";
import type { SafeProviderConnection } from "../../generated/client/types.gen.js";
import { updateAuthEntry, type AuthEntry, type AuthFileError, type ConnectionMetadata, type AuthFileLocation } from "./auth-file.js";
import { legacyConnectionId } from "./credentials.js";

export type ConnectionResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: AuthFileError | { readonly _tag: "ConnectionNotFound"; readonly message: string } };

function safeView(providerId: string, entry: AuthEntry, fallbackTime: number): SafeProviderConnection {
  const metadata: ConnectionMetadata = entry.type === "wellknown" ? {} : entry;
  const expiredLogin = entry.type === "oauth" && entry.refreshRejected === true;
  return {
    connectionId: metadata.connectionId ?? legacyConnectionId(providerId),
    providerId,
    label: metadata.label ?? providerId,
    method: entry.type === "api" ? "api_key" : "oauth",
    status: expiredLogin ? "reconnect_required" : "ready",
    createdAt: metadata.createdAt ?? fallbackTime,
    updatedAt: metadata.updatedAt ?? fallbackTime,
  };
}

const connectionIdOf = (providerId: string, entry: AuthEntry): string =>
  (entry.type !== "wellknown" ? entry.connectionId : undefined) ?? legacyConnectionId(providerId);

/** Stores `apiKey` as the provider's connection, replacing any previous one (key or login). */
export async function connectApiKey(
  location: AuthFileLocation,
  providerId: string,
  apiKey: string,
  label: string | undefined,
  now: number,
): Promise<ConnectionResult<SafeProviderConnection>> {
  const entry: AuthEntry = { type: "api", key: apiKey, connectionId: `conn_${randomUUID()}`, label: label ?? providerId, createdAt: now, updatedAt: now };
  const written = await updateAuthEntry(location, providerId, () => entry);
  return written.ok ? { ok: true, value: safeView(providerId, entry, now) } : written;
}

const notFound = (providerId: string, connectionId: string) =>
  ({ ok: false, error: { _tag: "ConnectionNotFound", message: `Provider "${providerId}" has no stored connection ${connectionId}` } }) as const;

/** Changes a stored connection's label (metadata only: the credential is kept as it is). */
export async function relabelConnection(
  location: AuthFileLocation,
  providerId: string,
  connectionId: string,
  label: string,
  now: number,
): Promise<ConnectionResult<SafeProviderConnection>> {
  let updated: AuthEntry | undefined;
  const written = await updateAuthEntry(location, providerId, (current) => {
    if (current === undefined || current.type === "wellknown" || connectionIdOf(providerId, current) !== connectionId) return "keep";
    updated = { ...current, connectionId, label, updatedAt: now, createdAt: current.createdAt ?? now };
    return updated;
  });
  if (!written.ok) return written;
  if (updated === undefined) return notFound(providerId, connectionId);
  return { ok: true, value: safeView(providerId, updated, now) };
}

/** Deletes the provider's stored connection when `connectionId` names it. */
export async function deleteConnection(location: AuthFileLocation, providerId: string, connectionId: string): Promise<ConnectionResult<true>> {
  let deleted = false;
  const written = await updateAuthEntry(location, providerId, (current) => {
    if (current === undefined || connectionIdOf(providerId, current) !== connectionId) return "keep";
    deleted = true;
    return undefined;
  });
  if (!written.ok) return written;
  return deleted ? { ok: true, value: true } : notFound(providerId, connectionId);
}

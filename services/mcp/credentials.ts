// Credential references (`environment`, `secret`, `oauth`) resolved at the transport boundary,
// when a connection attempt starts. Values never leave the transport: they are not logged, not
// in statuses and not in errors (an error names the reference, never its value). An unresolved
// reference fails the attempt; it is not retried automatically.
import type { CredentialReference } from "../config/types.js";
import type { Env } from "../config/paths.js";

export interface McpCredentialResolvers {
  /** Where `environment` references are read (the host's process environment). */
  readonly env: Env;
  /** `secret` references: only an injected resolver can answer them. */
  readonly secret?: ((reference: string) => string | undefined | Promise<string | undefined>) | undefined;
  /** `oauth` references: the current access token of that OAuth credential, refreshed as needed. */
  readonly oauth?: ((reference: string) => Promise<string | undefined>) | undefined;
}

/** A reference had no value. */
export class CredentialUnresolved extends Error {
  readonly _tag = "CredentialUnresolved" as const;
  constructor(
    readonly kind: CredentialReference["kind"],
    readonly reference: string,
    detail: string,
  ) {
    super(`the ${kind} credential ${JSON.stringify(reference)} ${detail}`);
    this.name = "CredentialUnresolved";
  }
}

/** An OAuth credential is missing, expired or was rejected: the user must authorize. */
export class AuthorizationRequired extends Error {
  readonly _tag = "AuthorizationRequired" as const;
  constructor(readonly reference: string) {
    super(`the OAuth credential ${JSON.stringify(reference)} needs authorization (ze-harness mcp auth)`);
    this.name = "AuthorizationRequired";
  }
}

/** Header-safe: non-empty visible ASCII (and spaces inside). */
const SAFE_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

export async function resolveReference(ref: CredentialReference, resolvers: McpCredentialResolvers): Promise<string> {
  let value: string | undefined;
  switch (ref.kind) {
    case "environment":
      value = resolvers.env[ref.reference];
      if (value === undefined || value === "") throw new CredentialUnresolved(ref.kind, ref.reference, "is not set in the host environment");
      return value;
    case "secret":
      if (!resolvers.secret) throw new CredentialUnresolved(ref.kind, ref.reference, "cannot be resolved: this host has no secret store");
      value = await resolvers.secret(ref.reference);
      if (value === undefined || value === "") throw new CredentialUnresolved(ref.kind, ref.reference, "is not in the secret store");
      return value;
    case "oauth":
      if (!resolvers.oauth) throw new AuthorizationRequired(ref.reference);
      value = await resolvers.oauth(ref.reference);
      if (value === undefined || !SAFE_VALUE.test(value)) throw new AuthorizationRequired(ref.reference);
      return value;
  }
}

/** Every entry of a header or environment map, resolved. */
export async function resolveCredentialMap(
  map: Readonly<Record<string, CredentialReference>> | undefined,
  resolvers: McpCredentialResolvers,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, ref] of Object.entries(map ?? {})) out[name] = await resolveReference(ref, resolvers);
  return out;
}

/** The variables a local server inherits from the host: `PATH` and the temporary-directory variables (plus Windows' system ones). */
export function inheritedEnvironment(env: Env): Record<string, string> {
  const names = ["PATH", "TMPDIR", "TEMP", "TMP", ...(process.platform === "win32" ? ["PATHEXT", "SystemRoot", "WINDIR"] : [])];
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

// An OAuth redirect's query as the contract's McpCredentialCallback, shared by the Node host's
// loopback listener (callback.ts) and the Worker's gateway route `GET /oauth/callback/:server`.
// Query values are never logged.
import type { McpCredentialCallback, McpCredentialCallbackDeniedReason } from "../../generated/client/types.gen.js";

export const CALLBACK_PATH_PREFIX = "/oauth/callback/";

const DENIED_REASONS: readonly McpCredentialCallbackDeniedReason[] = [
  "access_denied",
  "consent_required",
  "interaction_required",
  "invalid_request",
  "invalid_scope",
  "login_required",
  "server_error",
  "temporarily_unavailable",
  "unauthorized_client",
  "unsupported_response_type",
];

/** The callback a redirect's query describes, or undefined when it is not one. */
export function parseCallbackQuery(query: URLSearchParams): McpCredentialCallback | undefined {
  const state = query.get("state");
  if (state === null || state === "") return undefined;
  const issuer = query.get("iss") ?? undefined;
  const error = query.get("error");
  if (error !== null) {
    const reason = (DENIED_REASONS as readonly string[]).includes(error) ? (error as McpCredentialCallbackDeniedReason) : "server_error";
    return { kind: "denied", state, error: reason, ...(issuer !== undefined ? { issuer } : {}) };
  }
  const code = query.get("code");
  if (code === null || code === "") return undefined;
  return { kind: "success", state, code, ...(issuer !== undefined ? { issuer } : {}) };
}

// The OAuth 2.0 pieces every host-held login shares: bounded JSON requests to an authorization
// server, token responses (RFC 6749 §5.1) turned into an `auth.json` OAuth entry, and a JWT's
// `exp`. Nothing here logs, and no message carries a provider's text or a token: failures are
// our fixed wording plus, at most, a short error code the server sent.
import { readBounded } from "../../contract/body.js";
import type { OAuthAuthEntry } from "../auth-file.js";

/** Largest authorization-server response read (the wire bound). */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** An authorization server that does not answer in time fails the step. */
const REQUEST_TIMEOUT_MS = 30_000;

export type FetchImpl = (input: string, init: RequestInit) => Promise<Response>;

/** What a login step may use: the network, a clock and a sleep (injectable for tests). */
export interface LoginContext {
  readonly fetch: FetchImpl;
  readonly now: () => number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

export const defaultLoginContext = (): LoginContext => ({ fetch: (input, init) => globalThis.fetch(input, init), now: Date.now, sleep: defaultSleep });

/** A step that could not be completed; `message` is safe to show (no provider text, no token). */
export class LoginStepError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "LoginStepError";
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/**
 * An authorization-server URL we will send codes and tokens to: https, or http only to a
 * loopback address (a local test server or proxy). Relative values resolve against `base`.
 */
export function authorizationURL(value: string, base?: string): URL | undefined {
  let url: URL;
  try {
    url = base !== undefined ? new URL(value, base) : new URL(value);
  } catch {
    return undefined;
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") return undefined;
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return url;
  return undefined;
}

/** A short error code a server sent (`authorization_pending`, `invalid_grant`…), or undefined. */
export const safeCode = (value: unknown): string | undefined =>
  typeof value === "string" && /^[A-Za-z0-9_.:-]{1,64}$/.test(value) ? value : undefined;

export interface JsonResponse {
  readonly status: number;
  /** The parsed body when it was a JSON object, else undefined. */
  readonly body: Record<string, unknown> | undefined;
}

/** One request whose answer is read as a bounded JSON object. The signal aborts it. */
export async function requestJson(context: LoginContext, url: URL, init: RequestInit, signal?: AbortSignal): Promise<JsonResponse> {
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await context.fetch(url.href, { ...init, redirect: "error", signal: combined, headers: { accept: "application/json", ...(init.headers as Record<string, string> | undefined) } });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new LoginStepError(`cannot reach ${url.origin}`);
  }
  const bytes = await readBounded(response.body, MAX_RESPONSE_BYTES).catch(() => "too_large" as const);
  if (bytes === "too_large") return { status: response.status, body: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    parsed = undefined;
  }
  const body = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  return { status: response.status, body };
}

/** A form POST (`application/x-www-form-urlencoded`), as token and device endpoints take. */
export function postForm(context: LoginContext, url: URL, fields: Readonly<Record<string, string | undefined>>, signal?: AbortSignal): Promise<JsonResponse> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
  return requestJson(context, url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.toString() }, signal);
}

/** The `exp` claim of a JWT, in epoch ms, when the value is one. */
export function jwtExpiry(token: string): number | undefined {
  const claims = jwtClaims(token);
  const exp = claims?.["exp"];
  return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
}

/** A JWT's payload claims (unverified: only read for metadata such as `exp` or an account id). */
export function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A token is stored only when it is safe for one `Authorization` header: visible ASCII, bounded. */
const isToken = (value: unknown): value is string => typeof value === "string" && /^[\x21-\x7e]{1,16384}$/.test(value);

/** Tokens as received from a token endpoint. */
export interface TokenSet {
  readonly access: string;
  /** Absent when the server issued none (or kept the previous one on a refresh). */
  readonly refresh?: string;
  /** Epoch ms: `expires_in`, else the access token's JWT `exp`, else never. */
  readonly expires: number;
  readonly idToken?: string;
}

/** Reads a successful token response, or undefined when it is not one. */
export function tokenSet(body: Record<string, unknown> | undefined, now: number): TokenSet | undefined {
  if (body === undefined || !isToken(body["access_token"])) return undefined;
  const access = body["access_token"];
  const expiresIn = body["expires_in"];
  const seconds = typeof expiresIn === "number" ? expiresIn : typeof expiresIn === "string" && /^\d+$/.test(expiresIn) ? Number(expiresIn) : undefined;
  const expires = seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? now + seconds * 1000 : (jwtExpiry(access) ?? Number.MAX_SAFE_INTEGER);
  return {
    access,
    ...(isToken(body["refresh_token"]) ? { refresh: body["refresh_token"] } : {}),
    expires,
    ...(isToken(body["id_token"]) ? { idToken: body["id_token"] } : {}),
  };
}

/** The auth.json entry a login writes (connection metadata added by the caller). */
export function oauthEntry(tokens: TokenSet, login: { readonly tokenEndpoint: string; readonly clientId?: string; readonly method: string; readonly accountId?: string }): OAuthAuthEntry {
  return {
    type: "oauth",
    access: tokens.access,
    refresh: tokens.refresh ?? "",
    expires: tokens.expires,
    ...(login.accountId !== undefined ? { accountId: login.accountId } : {}),
    tokenEndpoint: login.tokenEndpoint,
    ...(login.clientId !== undefined ? { clientId: login.clientId } : {}),
    login: login.method,
  };
}

/** The effective expiry of a stored login: its recorded `expires`, or the access token's JWT `exp` when earlier. */
export function effectiveExpiry(entry: Pick<OAuthAuthEntry, "access" | "expires">): number {
  const exp = jwtExpiry(entry.access);
  return exp !== undefined ? Math.min(exp, entry.expires) : entry.expires;
}

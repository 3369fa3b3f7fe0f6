// Request guards that run before routing: Host and Origin checks against DNS
// rebinding and cross-site calls, and the optional bearer token. Each returns a
// discriminated result rather than throwing.
import { createHash, timingSafeEqual } from "node:crypto";

export interface GuardOptions {
  /** Host names (without port) accepted in the Host header; `"*"` accepts any. Default: loopback names. */
  readonly allowedHosts?: readonly string[];
  /** Exact origins (scheme://host[:port]) browsers may call from, besides same-origin loopback pages. */
  readonly allowedOrigins?: readonly string[];
  /** Bearer token every authenticated operation demands; absent means no authentication. */
  readonly token?: string;
}

export type GuardResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/** Host name of a Host header value, without the port, lower-cased. */
export function hostName(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(":");
  return colon === -1 ? value : value.slice(0, colon);
}

export function checkHost(request: Request, options: GuardOptions): GuardResult {
  const allowed = options.allowedHosts ?? LOOPBACK_HOSTS;
  if (allowed.includes("*")) return { ok: true };
  const header = request.headers.get("host") ?? new URL(request.url).host;
  const name = hostName(header);
  if (allowed.includes(name)) return { ok: true };
  return { ok: false, message: `Host ${JSON.stringify(header)} is not allowed on this server` };
}

export function checkOrigin(request: Request, options: GuardOptions): GuardResult {
  const origin = request.headers.get("origin");
  if (origin === null) return { ok: true };
  if (options.allowedOrigins?.includes(origin)) return { ok: true };
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return { ok: false, message: `Origin ${JSON.stringify(origin)} is not allowed` };
  }
  // A page served by this very server may call it.
  const requestUrl = new URL(request.url);
  const host = request.headers.get("host") ?? requestUrl.host;
  if (parsed.host === host && checkHost(request, options).ok) return { ok: true };
  return { ok: false, message: `Origin ${JSON.stringify(origin)} is not allowed` };
}

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

export function checkToken(request: Request, options: GuardOptions): GuardResult {
  if (options.token === undefined) return { ok: true };
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return { ok: false, message: "A bearer token is required" };
  // Compare digests so the comparison time does not depend on the token's length or content.
  if (!timingSafeEqual(digest(match[1]!), digest(options.token))) return { ok: false, message: "The bearer token is not valid" };
  return { ok: true };
}

// Redirects of a streamable HTTP MCP server ("MCP Streamable HTTP ownership"), followed here
// rather than by fetch: every hop is fetched with `redirect: "manual"`, the superseded response's
// body is released before the next hop, and hops are identified by their canonical URL (WHATWG
// serialization: case, default ports, dot segments) so a cycle fails at once instead of running
// until a limit. Once a hop leaves the endpoint's origin (the resource changed), the credential and
// session headers — Authorization, Proxy-Authorization, Cookie, Mcp-Session-Id and every configured
// credential header — are no longer sent, for that hop and every later one. Hops are unlimited
// unless the caller sets `redirectHops`; exceeding it fails with McpLimitReached("redirectHops").
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpLimitReached } from "./limits.js";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Headers never sent to another origin than the endpoint's, besides the configured ones. */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "proxy-authorization", "cookie", "mcp-session-id"];

/** A redirect led back to a URL this request already visited. */
export class RedirectLoop extends Error {
  readonly _tag = "RedirectLoop" as const;
  constructor(readonly url: string) {
    super(`redirect loop: the server redirected back to ${url}`);
    this.name = "RedirectLoop";
  }
}

export interface RedirectOptions {
  /** The most redirects one request may follow; undefined: unlimited. */
  readonly hops?: number | undefined;
  /** Configured credential header names (any case), stripped like {@link CREDENTIAL_HEADERS}. */
  readonly credentialHeaders?: readonly string[] | undefined;
}

/** A URL without its fragment, as redirects are compared. */
const canonical = (url: URL): string => {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
};

/**
 * `fetch` that follows redirects itself. `headersFor(url)` gives the headers of one hop (the
 * endpoint's, credentials included); on a hop outside the first origin the credential and session
 * headers are removed from them.
 */
export function followingRedirects(base: FetchLike, options: RedirectOptions = {}): FetchLike {
  const strip = new Set([...CREDENTIAL_HEADERS, ...(options.credentialHeaders ?? []).map((name) => name.toLowerCase())]);
  return async (input, init) => {
    let url = new URL(String(input));
    const origin = url.origin;
    const visited = new Set([canonical(url)]);
    let method = (init?.method ?? "GET").toUpperCase();
    let body = init?.body;
    let left = false;
    for (let hops = 0; ; hops += 1) {
      const headers = new Headers(init?.headers);
      if (left) for (const name of strip) headers.delete(name);
      if (body === undefined || body === null) headers.delete("content-type");
      const response = await base(url, { ...init, method, headers, body, redirect: "manual" });
      const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
      if (location === null) return response;
      // The superseded body is released before the next hop.
      await response.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      if (next.protocol !== "http:" && next.protocol !== "https:") throw new TypeError(`the server redirected to a ${next.protocol} URL`);
      if (options.hops !== undefined && hops >= options.hops) throw new McpLimitReached("redirectHops", options.hops);
      const key = canonical(next);
      if (visited.has(key)) throw new RedirectLoop(key);
      visited.add(key);
      // 303, and 301/302 after a POST, continue as a GET without a body (as fetch does).
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = undefined;
      }
      if (next.origin !== origin || next.username !== "" || next.password !== "") left = true;
      url = next;
    }
  };
}

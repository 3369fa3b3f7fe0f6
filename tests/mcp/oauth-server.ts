// A small OAuth 2.1 authorization server (discovery, dynamic client registration, PKCE
// authorization codes, refresh with rotation, revocation) in front of a streamable HTTP MCP
// server (the SDK's, stateless) whose `whoami` Tool reports the bearer token and a configured
// header it received. Loopback only; everything it sees is recorded for the assertions.
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface OAuthTestServer {
  readonly base: string;
  readonly mcpUrl: string;
  readonly registrations: Record<string, unknown>[];
  readonly authorizeRequests: URLSearchParams[];
  readonly tokenRequests: URLSearchParams[];
  readonly revocations: string[];
  /** Authorization headers the MCP endpoint received (including rejected ones). */
  readonly mcpAuthorizations: (string | undefined)[];
  /** Invalidates an access token server-side (the next use answers 401). */
  revokeAccess(token: string): void;
  /** Makes every refresh grant fail with invalid_grant. */
  rejectRefresh: boolean;
  /** When set, the next authorization-code grant is held (before its code is looked at) until this settles; `onHold` runs when it is. */
  holdCodeExchange?: { readonly until: Promise<void>; readonly onHold: () => void } | undefined;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(value));
}

export async function startOAuthServer(): Promise<OAuthTestServer> {
  let base = "";
  const clients = new Map<string, { redirect_uris: string[] }>();
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; resource: string | null }>();
  const access = new Set<string>();
  const refresh = new Set<string>();
  let issued = 0;
  const issue = () => {
    issued += 1;
    const tokens = { access_token: `access-${issued}`, refresh_token: `refresh-${issued}`, token_type: "Bearer", expires_in: 3600, scope: "mcp" };
    access.add(tokens.access_token);
    refresh.add(tokens.refresh_token);
    return tokens;
  };
  const state: OAuthTestServer = {
    base: "",
    mcpUrl: "",
    registrations: [],
    authorizeRequests: [],
    tokenRequests: [],
    revocations: [],
    mcpAuthorizations: [],
    revokeAccess: (token) => void access.delete(token),
    rejectRefresh: false,
    close: async () => undefined,
  };

  async function mcp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const authorization = request.headers.authorization;
    state.mcpAuthorizations.push(authorization);
    const token = authorization?.startsWith("Bearer ") ? authorization.slice(7) : undefined;
    if (token === undefined || !access.has(token)) {
      json(response, 401, { error: "invalid_token" }, { "www-authenticate": `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"` });
      return;
    }
    if (request.method !== "POST") {
      json(response, 405, { error: "method not allowed" });
      return;
    }
    const team = request.headers["x-team"];
    const server = new McpServer({ name: "secure", version: "1" });
    server.registerTool("whoami", { description: "Reports the caller's token and team." }, async () => ({ content: [{ type: "text", text: `token=${token} team=${String(team)}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, JSON.parse(await body(request)));
  }

  const http = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? "/", base);
      if (url.pathname === "/mcp") return mcp(request, response);
      if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
        return json(response, 200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ["mcp"] });
      }
      if (url.pathname === "/.well-known/oauth-authorization-server") {
        return json(response, 200, {
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          revocation_endpoint: `${base}/revoke`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
          authorization_response_iss_parameter_supported: true,
        });
      }
      if (url.pathname === "/register" && request.method === "POST") {
        const metadata = JSON.parse(await body(request)) as { redirect_uris: string[] };
        state.registrations.push(metadata);
        const clientId = `client-${state.registrations.length}`;
        clients.set(clientId, metadata);
        return json(response, 201, { ...metadata, client_id: clientId, token_endpoint_auth_method: "none" });
      }
      if (url.pathname === "/authorize") {
        const query = url.searchParams;
        state.authorizeRequests.push(query);
        const redirect = new URL(query.get("redirect_uri")!);
        const code = randomUUID();
        codes.set(code, { clientId: query.get("client_id")!, redirectUri: query.get("redirect_uri")!, challenge: query.get("code_challenge")!, resource: query.get("resource") });
        redirect.searchParams.set("code", code);
        redirect.searchParams.set("state", query.get("state")!);
        redirect.searchParams.set("iss", base);
        response.writeHead(302, { location: redirect.href });
        return response.end();
      }
      if (url.pathname === "/token" && request.method === "POST") {
        const form = new URLSearchParams(await body(request));
        state.tokenRequests.push(form);
        if (form.get("grant_type") === "authorization_code") {
          const hold = state.holdCodeExchange;
          if (hold !== undefined) {
            state.holdCodeExchange = undefined;
            hold.onHold();
            await hold.until;
          }
          const grant = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          const verifier = form.get("code_verifier") ?? "";
          const challenge = createHash("sha256").update(verifier).digest("base64url");
          if (!grant || grant.clientId !== form.get("client_id") || grant.redirectUri !== form.get("redirect_uri") || grant.challenge !== challenge || grant.resource !== form.get("resource")) {
            return json(response, 400, { error: "invalid_grant" });
          }
          return json(response, 200, issue());
        }
        if (form.get("grant_type") === "refresh_token") {
          const token = form.get("refresh_token") ?? "";
          if (state.rejectRefresh || !refresh.has(token)) return json(response, 400, { error: "invalid_grant" });
          refresh.delete(token);
          return json(response, 200, issue());
        }
        return json(response, 400, { error: "unsupported_grant_type" });
      }
      if (url.pathname === "/revoke" && request.method === "POST") {
        const token = new URLSearchParams(await body(request)).get("token") ?? "";
        state.revocations.push(token);
        refresh.delete(token);
        access.delete(token);
        response.writeHead(200);
        return response.end();
      }
      json(response, 404, { error: "not found" });
    })().catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  Object.assign(state, {
    base,
    mcpUrl: `${base}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  });
  return state;
}

// A local OAuth 2.0 authorization server (node:http, 127.0.0.1) for the provider login suites:
// an RFC 8414-style device login descriptor, RFC 8628 device authorization and device-code
// polling, the refresh_token grant, and the ChatGPT (Codex) device login's endpoints. Each poll
// and refresh is answered from a script the test sets; every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the next device-code (or Codex) poll is answered. */
export type PollAnswer = "pending" | "slow_down" | "denied" | "expired" | "approve" | "server_error";
/** How the next refresh grant is answered. */
export type RefreshAnswer = "ok" | "invalid_grant" | "server_error";

export interface RecordedOAuthRequest {
  readonly method: string;
  readonly path: string;
  readonly form: Record<string, string>;
  readonly json: Record<string, unknown> | undefined;
}

export interface OAuthServerOptions {
  /** `interval` of the device authorization (seconds; default 0 so tests do not wait). */
  readonly interval?: number;
  /** `expires_in` of the device code (seconds; default 600). */
  readonly codeExpiresIn?: number;
  /** `expires_in` of every access token issued (seconds; default 3600). */
  readonly accessExpiresIn?: number;
  /** `expires_in` of access tokens issued by a refresh (seconds; default accessExpiresIn). */
  readonly refreshedExpiresIn?: number;
  /** The discovery document's `client_id` (default `ze-test-client`). */
  readonly clientId?: string;
}

export interface OAuthServer {
  readonly url: string;
  /** The descriptor's path (what `login.device.discoveryURL` names). */
  readonly discoveryPath: string;
  /** Answers of the next polls, in order; once empty, polls answer `pending`. */
  readonly polls: PollAnswer[];
  /** Answers of the next refresh grants; once empty, `ok`. */
  readonly refreshes: RefreshAnswer[];
  /** Holds refresh answers until released (to observe a refresh in flight). */
  holdRefreshes(): () => void;
  readonly requests: RecordedOAuthRequest[];
  /** Access tokens issued so far, in order (`access-1`, …, or JWTs for the Codex login). */
  readonly issued: string[];
  /** Resolves once `predicate` holds for the recorded requests. */
  waitFor(predicate: (requests: readonly RecordedOAuthRequest[]) => boolean): Promise<void>;
  count(path: string, grant?: string): number;
  close(): Promise<void>;
}

/** A JWT-shaped token (unsigned) with `claims`: what the Codex issuer's tokens look like. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.sig`;
}

export async function startOAuthServer(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const requests: RecordedOAuthRequest[] = [];
  const issued: string[] = [];
  const polls: PollAnswer[] = [];
  const refreshes: RefreshAnswer[] = [];
  const waiters = new Set<() => void>();
  let held: Promise<void> | undefined;
  let tokens = 0;
  let url = "";

  const send = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    response.end(JSON.stringify(body));
  };
  const issue = (codex: boolean, refreshed = false): Record<string, unknown> => {
    tokens += 1;
    const access = codex ? fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600, n: tokens, "https://api.openai.com/auth": { chatgpt_account_id: "acct-test-1" } }) : `access-${tokens}`;
    issued.push(access);
    return {
      access_token: access,
      refresh_token: `refresh-${tokens}`,
      token_type: "Bearer",
      expires_in: (refreshed ? options.refreshedExpiresIn : undefined) ?? options.accessExpiresIn ?? 3600,
      ...(codex ? { id_token: fakeJwt({ email: "user@example.com", chatgpt_account_id: "acct-test-1" }) } : {}),
    };
  };
  const pollError = (response: ServerResponse, answer: PollAnswer): void => {
    if (answer === "server_error") return send(response, 500, { error: "server_error" });
    const code = { pending: "authorization_pending", slow_down: "slow_down", denied: "access_denied", expired: "expired_token" }[answer as "pending"];
    send(response, 400, { error: code, error_description: "provider text that must never be shown" });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const path = new URL(request.url ?? "/", url).pathname;
    const form = Object.fromEntries(new URLSearchParams(request.headers["content-type"]?.includes("form") ? text : ""));
    let json: Record<string, unknown> | undefined;
    try {
      json = request.headers["content-type"]?.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    } catch {
      json = undefined;
    }
    requests.push({ method: request.method ?? "GET", path, form, json });
    for (const waiter of [...waiters]) waiter();

    // The same descriptor at the RFC 8414 well-known path (where the TAP sign-in looks for it).
    if ((path === "/auth/device" || path === "/.well-known/oauth-authorization-server") && request.method === "GET") {
      return send(response, 200, { issuer: url, device_authorization_endpoint: "/oauth/device", token_endpoint: `${url}/oauth/token`, client_id: options.clientId ?? "ze-test-client", scope: "models" });
    }
    if (path === "/oauth/device" && request.method === "POST") {
      return send(response, 200, {
        device_code: `device-code-${requests.length}`,
        user_code: "WDJB-MJHT",
        verification_uri: `${url}/activate`,
        expires_in: options.codeExpiresIn ?? 600,
        interval: options.interval ?? 0,
      });
    }
    if (path === "/oauth/token" && request.method === "POST") {
      const grant = form["grant_type"];
      if (grant === "urn:ietf:params:oauth:grant-type:device_code") {
        const answer = polls.shift() ?? "pending";
        return answer === "approve" ? send(response, 200, issue(false)) : pollError(response, answer);
      }
      if (grant === "refresh_token") {
        if (held) await held;
        const answer = refreshes.shift() ?? "ok";
        if (answer === "invalid_grant") return send(response, 400, { error: "invalid_grant" });
        if (answer === "server_error") return send(response, 503, { error: "temporarily_unavailable" });
        return send(response, 200, issue(form["client_id"] === "app_EMoamEEZ73f0CkXaXp7hrann", true));
      }
      if (grant === "authorization_code") return send(response, 200, issue(true));
      return send(response, 400, { error: "unsupported_grant_type" });
    }
    // The ChatGPT (Codex) device login.
    if (path === "/api/accounts/deviceauth/usercode" && request.method === "POST") {
      return send(response, 200, { device_auth_id: "deviceauth-1", user_code: "CODX-1234", interval: String(options.interval ?? 0) });
    }
    if (path === "/api/accounts/deviceauth/token" && request.method === "POST") {
      const answer = polls.shift() ?? "pending";
      if (answer === "approve") return send(response, 200, { authorization_code: "auth-code-1", code_challenge: "x", code_verifier: "verifier-1" });
      if (answer === "pending") return send(response, 403, { error: { message: "pending" } });
      if (answer === "denied") return send(response, 400, { error: "access_denied" });
      return pollError(response, answer);
    }
    send(response, 404, { error: "not_found" });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => send(response, 500, { error: "server_error" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    discoveryPath: "/auth/device",
    polls,
    refreshes,
    holdRefreshes() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    requests,
    issued,
    waitFor: (predicate) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (predicate(requests)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      }),
    count: (path, grant) => requests.filter((request) => request.path === path && (grant === undefined || request.form["grant_type"] === grant)).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

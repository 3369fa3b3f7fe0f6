// The gateway route `GET /oauth/callback/:server`: the authorization server's browser redirect
// to the public callback address (HARNESS_MCP_CALLBACK_BASE_URL) is forwarded to the server
// object of `:server`, which completes the authorization its pending `state` selects
// (worker/oauth.ts). The deployment's Host policy applies (the browser's navigation carries no
// Origin of an API client and no bearer token: the `state` is the capability); the identity
// headers are the gateway's own; the object answers 404 when it is not bound to that name, and
// never binds itself to a name through this route. Query values are never logged.
import { checkHost, type GuardOptions } from "../services/http/guard.js";
import { checkRequestSize } from "../services/http/request.js";
import { callbackPage } from "./oauth.js";
import { SERVER_HEADER, SESSION_HEADER } from "./server-object.js";

const HEADER_SAFE = /^(?![ \t])[^\x00-\x1f\x7f]*(?<![ \t])$/u;

interface Namespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export async function forwardOAuthCallback(request: Request, guard: GuardOptions, servers: Namespace, server: string): Promise<Response> {
  const host = checkHost(request, guard);
  if (!host.ok) return callbackPage(403, "Forbidden", host.message);
  if (request.method !== "GET") return callbackPage(405, "Not an expected callback", "Authorization callbacks are GET requests.");
  const url = new URL(request.url);
  if (checkRequestSize(request, url)) return callbackPage(414, "Not an expected callback", "The request is too large.");
  // Nothing without a state reaches (and wakes) an object.
  if (!url.searchParams.get("state")) return callbackPage(400, "Not an expected callback", "The request carries no authorization response.");
  if (!HEADER_SAFE.test(server) || server === "") return callbackPage(400, "Not an expected callback", "The server name is not valid.");
  const headers = new Headers();
  headers.set(SERVER_HEADER, server);
  headers.delete(SESSION_HEADER);
  const object = servers.get(servers.idFromName(server));
  return object.fetch(new Request(url.href, { method: "GET", headers }));
}

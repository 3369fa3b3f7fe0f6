// The loopback OAuth callback listener (`--mcp-callback-port`): one HTTP server on 127.0.0.1 that
// accepts the authorization server's redirect to `/oauth/callback/<server>`, answers with a
// self-contained success or error page and hands the parameters on as the contract's
// `McpCredentialCallback`. Query values are never logged.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpCredentialCallback } from "../../generated/client/types.gen.js";
import { CALLBACK_PATH_PREFIX, parseCallbackQuery } from "./callback-query.js";

// Split out (callback-query.ts) so a host without node:http (the Worker's gateway route) shares it.
export { CALLBACK_PATH_PREFIX, parseCallbackQuery } from "./callback-query.js";

/** The callback port when none is configured (opencode's). */
export const DEFAULT_CALLBACK_PORT = 19876;

/** The environment variable an embedded host reads its callback port from (`--mcp-callback-port`). */
export const CALLBACK_PORT_VARIABLE = "ZE_HARNESS_MCP_CALLBACK_PORT";

/** `http://127.0.0.1:<port>/oauth/callback/<server>`. */
export const callbackUrl = (port: number, serverName: string): string => `http://127.0.0.1:${port}${CALLBACK_PATH_PREFIX}${encodeURIComponent(serverName)}`;

const page = (title: string, text: string): string =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto"><h1>${title}</h1><p>${text}</p></body></html>`;

export interface CallbackListener {
  /** The bound port. */
  readonly port: number;
  /** The next callback for `serverName` (or any server when omitted). */
  next(serverName?: string): Promise<McpCredentialCallback>;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` (0 picks a free port). Rejects when the port cannot be bound. */
export async function listenForCallbacks(port: number = DEFAULT_CALLBACK_PORT): Promise<CallbackListener> {
  const waiting: { server: string | undefined; resolve: (callback: McpCredentialCallback) => void }[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const name = url.pathname.startsWith(CALLBACK_PATH_PREFIX) ? decodeURIComponent(url.pathname.slice(CALLBACK_PATH_PREFIX.length)) : undefined;
    const callback = request.method === "GET" && name !== undefined ? parseCallbackQuery(url.searchParams) : undefined;
    const index = callback ? waiting.findIndex((w) => w.server === undefined || w.server === name) : -1;
    if (!callback || index < 0) {
      response.writeHead(404, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      response.end(page("Not an expected callback", "Ze Harness is not waiting for this authorization."));
      return;
    }
    const [waiter] = waiting.splice(index, 1);
    const ok = callback.kind === "success";
    response.writeHead(ok ? 200 : 400, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    response.end(ok ? page("Authorization received", "You can close this window and return to Ze Harness.") : page("Authorization refused", `The authorization server answered ${callback.kind === "denied" ? callback.error : "an error"}.`));
    waiter!.resolve(callback);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    next: (serverName) => new Promise((resolve) => waiting.push({ server: serverName, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

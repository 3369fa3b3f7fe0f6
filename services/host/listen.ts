// Binds a Fetch handler to a TCP listener. Loopback by default; any other address
// must be asked for explicitly and is refused without a bearer token.
import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";

export interface ListenOptions {
  readonly port: number;
  readonly hostname: string;
}

export interface Listener {
  /** e.g. http://127.0.0.1:4317 */
  readonly url: string;
  close(): Promise<void>;
}

export const isLoopbackAddress = (hostname: string): boolean =>
  hostname === "127.0.0.1" || hostname === "::1" || hostname === "localhost";

export async function listen(fetch: (request: Request) => Promise<Response>, options: ListenOptions): Promise<Listener> {
  const server = await new Promise<ServerType>((resolvePromise, reject) => {
    const created = serve({ fetch, port: options.port, hostname: options.hostname }, () => resolvePromise(created));
    created.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        // Open SSE streams would keep close() waiting forever.
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

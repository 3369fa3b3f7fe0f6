// The composition root of `serve`: checks the listener options (loopback unless told otherwise
// and guarded by a token; a usable root and token), builds the harness, and binds its Fetch
// handler to a TCP listener. The CLI's `serve` imports only this.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { LOOPBACK_HOSTS } from "../http/guard.js";
import { createHarness, type HarnessOptions } from "./harness.js";
import { connectionLogger, stderrLogger } from "../daemon/log.js";
import { isLoopbackAddress, listen } from "./listen.js";

export interface ServerOptions extends Omit<HarnessOptions, "allowedHosts" | "runnerScope"> {
  readonly port: number;
  readonly hostname: string;
  /** Extra Host header names to accept besides the loopback names and a non-loopback `hostname`. */
  readonly allowedHosts?: readonly string[];
  /** Logs client.connect / client.disconnect lines (logfmt) to stderr, as a foreground `serve` does. */
  readonly logConnections?: boolean;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:4317 */
  readonly url: string;
  close(): Promise<void>;
}

/** A server that cannot be used as asked: the caller reports it as a usage error. */
export class ServerOptionsError extends Error {
  readonly _tag = "ServerOptionsError";
}

/** Refuses options a server would start with but could never serve a request under. */
export function checkServerOptions(options: Pick<ServerOptions, "hostname" | "token" | "serverRoot">): void {
  if (options.token !== undefined && options.token.trim() === "") {
    throw new ServerOptionsError("--token must not be empty (every request would then be refused); omit it to serve loopback without a token");
  }
  if (!isLoopbackAddress(options.hostname) && options.token === undefined) {
    throw new ServerOptionsError(`refusing to listen on non-loopback address ${options.hostname} without --token`);
  }
  const root = resolve(options.serverRoot);
  const stat = statSync(root, { throwIfNoEntry: false });
  if (stat === undefined) throw new ServerOptionsError(`--root ${root} does not exist`);
  if (!stat.isDirectory()) throw new ServerOptionsError(`--root ${root} is not a directory`);
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  checkServerOptions(options);
  const allowedHosts = [...LOOPBACK_HOSTS, ...(isLoopbackAddress(options.hostname) ? [] : [options.hostname]), ...(options.allowedHosts ?? [])];
  const harness = await createHarness({ ...options, serverRoot: resolve(options.serverRoot), allowedHosts, runnerScope: "unowned", backgroundModels: true, backgroundPlugins: true });
  let listener: Awaited<ReturnType<typeof listen>>;
  try {
    listener = await listen(harness.fetch, { port: options.port, hostname: options.hostname, ...(options.logConnections ? { onConnection: connectionLogger(stderrLogger("server")) } : {}) });
  } catch (error) {
    await harness.close();
    throw error;
  }
  return {
    url: listener.url,
    close: async () => {
      await listener.close();
      await harness.close();
    },
  };
}

// The composition root of `serve`: checks the listener options (loopback unless told otherwise
// and guarded by a token; a usable root and token), builds the harness, and binds its Fetch
// handler to a TCP listener. The CLI's `serve` imports only this.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { LOOPBACK_HOSTS } from "../http/guard.js";
import { createHarness, type HarnessOptions } from "./harness.js";
import { connectionLogger, stderrLogger } from "../daemon/log.js";
import { isLoopbackAddress, listen } from "./listen.js";
import { socketTableReadable } from "../contract/socket-owner.js";

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

/** An origin as a browser sends it: http(s)://host[:port], nothing more. */
const isOrigin = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
};

/** Refuses options a server would start with but could never serve a request under (or should not). */
export function checkServerOptions(options: Pick<ServerOptions, "hostname" | "token" | "serverRoot" | "frameAncestors">): void {
  for (const origin of options.frameAncestors ?? []) {
    if (!isOrigin(origin)) throw new ServerOptionsError(`--frame-ancestor ${JSON.stringify(origin)} is not an origin (scheme://host[:port], e.g. https://intranet.example)`);
  }
  if ((options.frameAncestors?.length ?? 0) > 0 && options.token === undefined) {
    throw new ServerOptionsError("--frame-ancestor needs --token: a page of another origin must never frame a server that asks for no token");
  }
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

/** What a tokenless server tells its operator at start. */
function unauthenticatedNotice(): string {
  const others = socketTableReadable() ? "connections of other local users are refused (403)" : "other local users can connect too";
  return `serving without a token: every process of this user can use this server, ${others}; set ZE_HARNESS_TOKEN (or --token) to require one`;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  checkServerOptions(options);
  const allowedHosts = [...LOOPBACK_HOSTS, ...(isLoopbackAddress(options.hostname) ? [] : [options.hostname]), ...(options.allowedHosts ?? [])];
  const harness = await createHarness({ ...options, serverRoot: resolve(options.serverRoot), allowedHosts, runnerScope: "unowned", backgroundModels: true, backgroundPlugins: true });
  let listener: Awaited<ReturnType<typeof listen>>;
  try {
    const log = stderrLogger("server");
    listener = await listen(harness.fetch, {
      port: options.port,
      hostname: options.hostname,
      // Without a token the reference serves its own user unauthenticated; nobody else is served.
      ownUserOnly: options.token === undefined,
      admission: { onRefused: (reason, count) => log.warn("connection.refused", { reason, count }) },
      ...(options.logConnections ? { onConnection: connectionLogger(log) } : {}),
    });
    // A foreground serve's operator reads its stderr: say that it asks for no token, and who it serves.
    if (options.logConnections && options.token === undefined) log.warn("server.unauthenticated", { message: unauthenticatedNotice() });
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

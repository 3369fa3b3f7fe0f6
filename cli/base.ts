// The one path from a command to the server, always through the generated client: the shared
// local daemon by default (services/daemon/client.ts finds or starts it; nothing of services/host
// loads in this process), `--embedded` in-process (the composition root services/host/harness.ts,
// loaded only then), or `--remote` over HTTP.
import { createZeClient, type ZeClient } from "../clients/index.js";
import type { ConnectionValues } from "./spec.js";
import type { SandboxSetting } from "../services/sandbox/policy.js";
import { usageError } from "./errors.js";
import { daemonStartProgress } from "./start-progress.js";
import { VersionNotices } from "./version-notices.js";

export interface Connection {
  readonly client: ZeClient;
  /** The server name every Session call addresses. */
  readonly server: string;
  /** True when the client runs on the same machine as the server (embedded or daemon). */
  readonly local: boolean;
  /** The shared local daemon this connection reaches: when it started and what it loaded its host config from (cli/config-hint.ts). */
  readonly daemon?: { readonly startedAt: string; readonly config: string | null; readonly serverRoot: string };
  /** True when atomically() really is one transaction (embedded only). */
  readonly atomic: boolean;
  /**
   * Runs `fn` (calls through `client`) as one unit of work: embedded, every write it makes
   * commits together or not at all (the harness's atomically()); otherwise it just runs `fn`.
   */
  atomically<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Server-version notices (stderr by default; the TUI routes them to its notice line). */
  readonly versionNotices: VersionNotices;
}

export interface ConnectOptions {
  /** Let the embedded host run admitted Turns (only commands that wait for them). */
  readonly runTurns?: boolean;
  /** `--sandbox MODE` (services/sandbox): the embedded host's, or the one the daemon must run with. */
  readonly sandbox?: SandboxSetting | undefined;
}

export async function connect(flags: ConnectionValues, options: ConnectOptions = {}): Promise<Connection> {
  checkConnectionFlags(flags);
  const server = flags.server ?? "local";
  const versionNotices = new VersionNotices();
  const onServerVersion = versionNotices.observe;
  if (flags.remote !== undefined) {
    // A remote server's own config decides; a sandbox asked for here would not be applied.
    if (options.sandbox !== undefined) throw usageError("--sandbox applies to a local host (the daemon or --embedded); a --remote server runs commands as its own configuration says");
    const client = createZeClient({ baseUrl: flags.remote.replace(/\/+$/, ""), token: flags.token, onServerVersion });
    return { client, server, local: false, atomic: false, atomically: (fn) => fn(), close: async () => {}, versionNotices };
  }
  if (flags.embedded !== true) {
    // A daemon an earlier command proved, still the same process with the same token, is used at
    // once (services/daemon/proof-cache.ts); otherwise it is proven (or started) first.
    const { connectLocal } = await import("../services/daemon/client.js");
    const daemon = await connectLocal({
      env: process.env,
      cwd: process.cwd(),
      database: flags.database,
      config: flags.config,
      sandbox: options.sandbox,
      notice: (line) => void process.stderr.write(`${line}\n`),
      progress: daemonStartProgress(),
    });
    // The daemon fetch adds the token itself (and follows a restarted daemon to its new one).
    // A daemon of this release wrote its bodies with this build's code: not validated again here.
    const client = createZeClient({ baseUrl: daemon.url, fetch: daemon.fetch, onServerVersion, validateResponses: !daemon.sameRelease, lightRequests: true });
    const { startedAt, config, serverRoot } = daemon.status;
    return { client, server, local: true, daemon: { startedAt, config, serverRoot }, atomic: false, atomically: (fn) => fn(), close: async () => {}, versionNotices };
  }
  const { createHarness } = await import("../services/host/harness.js");
  const callbackPort = flags["mcp-callback-port"];
  const harness = await createHarness({
    database: flags.database,
    configPath: flags.config,
    serverRoot: process.cwd(),
    // The embedded host's MCP OAuth callback address (services/mcp/callback.ts reads it).
    env: callbackPort === undefined ? process.env : { ...process.env, ZE_HARNESS_MCP_CALLBACK_PORT: String(callbackPort) },
    runTurns: options.runTurns ?? false,
    sandbox: options.sandbox,
    // An embedded command runs only the Sessions it operates on; a server runs the rest.
    runnerScope: "owned",
  });
  // The in-process host is this build: its bodies are not validated again (nor zod.gen.ts's schemas built for it).
  const client = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch, validateResponses: false });
  return { client, server, local: true, atomic: true, atomically: (fn) => harness.atomically(fn), close: () => harness.close(), versionNotices };
}

/**
 * The reference's rules for the connection flags: `--server` selects a server of a remote Harness
 * (a local host serves only `local`), and `--config` configures a local host, so it is
 * unavailable with `--remote`.
 */
export function checkConnectionFlags(flags: ConnectionValues): void {
  if (flags.remote === undefined && flags.server !== undefined) throw usageError("--server selects a server of a remote Harness; it requires --remote");
  if (flags.remote !== undefined && flags.config !== undefined) throw usageError("--config configures a local host; it is unavailable with --remote (the remote server uses its own configuration)");
  if (flags["mcp-callback-port"] !== undefined && flags.embedded !== true) {
    throw usageError("--mcp-callback-port sets an embedded host's callback address (pass --embedded); the local daemon and a remote server decide their own");
  }
}

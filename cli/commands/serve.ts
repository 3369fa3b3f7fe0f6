import { usageError } from "../errors.js";
import { defineCommand, flag } from "../spec.js";
import { sandboxFlag } from "../args.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";

/** Resolves on the first SIGINT or SIGTERM (installed before anything is opened). */
function stopSignal(): Promise<void> {
  return new Promise<void>((resolvePromise) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolvePromise();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `serve --register`: the shared local daemon (services/host/daemon.ts). */
async function serveRegistered(flags: { readonly database?: string | undefined; readonly config?: string | undefined; readonly root?: string | undefined; readonly sandbox?: string | undefined }): Promise<number> {
  const stopRequested = stopSignal();
  const { startDaemon, DaemonRegistrationLost } = await import("../../services/host/daemon.js");
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon({
      database: flags.database,
      configPath: flags.config,
      sandbox: flags.sandbox as SandboxSetting | undefined,
      serverRoot: flags.root ?? process.cwd(),
      env: process.env,
      // Unexpected errors are logged by the harness into daemon.log, as the logfmt lines GET /v1/logs reads.
    });
  } catch (error) {
    // A racing spawner that lost the registration closes quietly: the winner serves.
    if (error instanceof DaemonRegistrationLost) {
      process.stderr.write(`${error.message}\n`);
      return 0;
    }
    throw error;
  }
  process.stdout.write(`${daemon.registration.url}\n`);
  await Promise.race([stopRequested.then(() => daemon.shutdown("signal")), daemon.closed]);
  await daemon.closed;
  return 0;
}

/** A taken port as one line: `error: AddressInUse: 127.0.0.1:4317 is in use; pass --port 0 for any free port`. */
function addressInUse(error: unknown, hostname: string, port: number): Error | undefined {
  if ((error as NodeJS.ErrnoException | null)?.code !== "EADDRINUSE") return undefined;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return Object.assign(new Error(`${host}:${port} is in use; pass --port 0 for any free port`), { _tag: "AddressInUse" });
}

export default defineCommand({
  summary: "Run a Ze Harness server in the foreground.",
  description:
    "Serves the v1 HTTP API, /openapi.json and the /reference page. The first line on stdout is the base URL (e.g. http://127.0.0.1:4317; with --injected-host followed by ` mode=injected-host`). SIGINT or SIGTERM closes it cleanly.",
  examples: ["<%= config.bin %> serve --port 0", "ZE_HARNESS_TOKEN=secret <%= config.bin %> serve --port 4317"],
  flags: {
    port: flag.integer({ description: "TCP port; 0 picks a free port.", default: 4317, min: 0, max: 65535 }),
    hostname: flag.string({ description: "Address to bind. Loopback (127.0.0.1 or ::1) unless you pass another address together with --token.", default: "127.0.0.1" }),
    database: flag.string({ description: "Database: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB)." }),
    config: flag.string({ description: "Config file to use instead of the nearest ze-harness.config.json." }),
    token: flag.string({
      description:
        "Bearer token every API call must present. Prefer ZE_HARNESS_TOKEN: a --token value is visible to every local user in ps. Without one the server serves only the user who started it.",
      env: "ZE_HARNESS_TOKEN",
    }),
    root: flag.string({ description: "Server root: Session workdirs resolve inside it. Defaults to the current directory." }),
    "frame-ancestor": flag.string({
      description: "An origin (https://host[:port]) that may embed the dashboard in a frame besides the server's own (repeatable; needs --token).",
      multiple: true,
    }),
    sandbox: sandboxFlag,
    "allowed-host": flag.string({ description: "Extra Host header name to accept (repeatable), for access through a proxy or a non-loopback address.", multiple: true }),
    "injected-host": flag.boolean({
      description:
        "Run as an embedding supervisor's injected host: loopback only, credentialMode injected-only (provider keys only from the supervisor through the provider connection routes, held in memory; never auth.json, a configured apiKey or the environment). The ready line is `<url> mode=injected-host`.",
    }),
    register: flag.boolean({
      description:
        "Run as the shared local daemon (what local commands start in the background): binds 127.0.0.1 on the first free port from 4096, demands the daemon-token secret, registers in server.json and logs to daemon.log. --port, --hostname, --token and --allowed-host do not apply.",
    }),
  },
  async run({ flags }) {
    const injectedHost = flags["injected-host"] === true;
    if (injectedHost && flags.register) throw usageError("--injected-host and --register cannot be combined");
    if (flags.register) return serveRegistered(flags);
    const { checkServerOptions, startServer, ServerOptionsError } = await import("../../services/host/server.js");
    const serverRoot = flags.root ?? process.cwd();
    const { isLoopbackAddress } = await import("../../services/host/listen.js");
    if (injectedHost && !isLoopbackAddress(flags.hostname)) throw usageError(`--injected-host serves loopback only, not ${flags.hostname}`);
    try {
      checkServerOptions({ hostname: flags.hostname, token: flags.token, serverRoot, frameAncestors: flags["frame-ancestor"] });
    } catch (error) {
      if (error instanceof ServerOptionsError) throw usageError(error.message);
      throw error;
    }
    // Installed before anything is opened, so a signal at any point closes cleanly instead of killing.
    const stopRequested = new Promise<void>((resolvePromise) => {
      const stop = (): void => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolvePromise();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    const { stderrLogger } = await import("../../services/daemon/log.js");
    const errorLog = stderrLogger("server");
    const server = await startServer({
      port: flags.port,
      hostname: flags.hostname,
      database: flags.database,
      configPath: flags.config,
      sandbox: flags.sandbox as SandboxSetting | undefined,
      serverRoot,
      env: process.env,
      token: flags.token,
      ...(injectedHost ? { credentialMode: "injected-only" as const } : {}),
      ...(flags["allowed-host"] ? { allowedHosts: flags["allowed-host"] } : {}),
      ...(flags["frame-ancestor"] ? { frameAncestors: flags["frame-ancestor"] } : {}),
      // A foreground server writes its connection lines to its own stderr.
      logConnections: true,
      // The client sees only a generic 500; the operator sees what went wrong (never request bodies),
      // as a logfmt line like the connection lines beside it.
      onUnexpectedError: (error, operationId) => {
        const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        errorLog.error("request.failed", { operation: operationId ?? "-", error: detail });
      },
    }).catch((error: unknown) => {
      throw addressInUse(error, flags.hostname, flags.port) ?? error;
    });
    // The URL line tells the caller the server is ready, and may be followed at once by a signal:
    // the handlers are in place before it is written.
    process.stdout.write(injectedHost ? `${server.url} mode=injected-host\n` : `${server.url}\n`);
    await stopRequested;
    await server.close();
  },
});

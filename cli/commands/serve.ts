import { Flags } from "@oclif/core";
import { BaseCommand } from "../command.js";

export default class Serve extends BaseCommand {
  static override summary = "Run a Ze Harness server in the foreground.";
  static override description =
    "Serves the v1 HTTP API, /openapi.json and the /reference page. The first line on stdout is the base URL (e.g. http://127.0.0.1:4317). SIGINT or SIGTERM closes it cleanly.";
  static override examples = ["<%= config.bin %> serve --port 0", "<%= config.bin %> serve --port 4317 --token secret"];
  static override flags = {
    port: Flags.integer({ description: "TCP port; 0 picks a free port.", default: 4317, min: 0, max: 65535 }),
    hostname: Flags.string({ description: "Address to bind. Loopback (127.0.0.1 or ::1) unless you pass another address together with --token.", default: "127.0.0.1" }),
    database: Flags.string({ description: "Database: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB)." }),
    config: Flags.string({ description: "Config file to use instead of the nearest ze-harness.config.json." }),
    token: Flags.string({ description: "Bearer token every API call must present (or ZE_HARNESS_TOKEN).", env: "ZE_HARNESS_TOKEN" }),
    root: Flags.string({ description: "Server root: Session workdirs resolve inside it. Defaults to the current directory." }),
    "allowed-host": Flags.string({ description: "Extra Host header name to accept (repeatable), for access through a proxy or a non-loopback address.", multiple: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    const { isLoopbackAddress, listen } = await import("../../services/host/listen.js");
    if (!isLoopbackAddress(flags.hostname) && flags.token === undefined) {
      this.error(`refusing to listen on non-loopback address ${flags.hostname} without --token`, { exit: 2 });
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
    const { createHarness } = await import("../../services/host/harness.js");
    const { LOOPBACK_HOSTS } = await import("../../services/http/guard.js");
    const allowedHosts = [...LOOPBACK_HOSTS, ...(isLoopbackAddress(flags.hostname) ? [] : [flags.hostname]), ...(flags["allowed-host"] ?? [])];
    const harness = await createHarness({
      database: flags.database,
      configPath: flags.config,
      serverRoot: flags.root ?? process.cwd(),
      env: process.env,
      token: flags.token,
      allowedHosts,
      // The client sees only a generic 500; the operator sees what went wrong (never request bodies).
      onUnexpectedError: (error, operationId) => {
        const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        process.stderr.write(`${new Date().toISOString()} level=ERROR event=request.failed operation=${operationId ?? "-"} error=${JSON.stringify(detail)}\n`);
      },
    });
    const listener = await listen(harness.fetch, { port: flags.port, hostname: flags.hostname });
    // The URL line tells the caller the server is ready, and may be followed at once by a signal:
    // the handlers are in place before it is written.
    process.stdout.write(`${listener.url}\n`);
    await stopRequested;
    await listener.close();
    await harness.close();
  }
}

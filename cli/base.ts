// The base of every command that talks to Ze Harness: global connection flags,
// one way to reach the server (embedded in-process handler or --remote URL, both
// through the generated client), JSON output, and one-line errors.
import { Flags } from "@oclif/core";
import { createZeClient, ZeClientError, type ZeClient } from "../clients/index.js";
import { BaseCommand, oneLine } from "./command.js";

export interface Connection {
  readonly client: ZeClient;
  /** The server name every Session call addresses. */
  readonly server: string;
  /** True when the client runs on the same machine as the server (embedded or daemon). */
  readonly local: boolean;
  close(): Promise<void>;
}

export const connectionFlags = {
  remote: Flags.string({ description: "Base URL of a remote Ze Harness server (e.g. http://127.0.0.1:4317).", helpGroup: "CONNECTION" }),
  server: Flags.string({ description: "Server name to address.", default: "local", helpGroup: "CONNECTION" }),
  token: Flags.string({ description: "Bearer token for the server (or ZE_HARNESS_TOKEN).", env: "ZE_HARNESS_TOKEN", helpGroup: "CONNECTION" }),
  embedded: Flags.boolean({ description: "Run in-process against the local database, without a daemon.", helpGroup: "CONNECTION", exclusive: ["remote"] }),
  database: Flags.string({ description: "Database: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB).", helpGroup: "CONNECTION" }),
  config: Flags.string({ description: "Config file to use instead of the nearest ze-harness.config.json.", helpGroup: "CONNECTION" }),
};

export type ConnectionFlags = {
  remote?: string | undefined;
  server: string;
  token?: string | undefined;
  embedded: boolean;
  database?: string | undefined;
  config?: string | undefined;
};

export abstract class ZeCommand extends BaseCommand {
  static override baseFlags = connectionFlags;

  private connection: Connection | undefined;

  /**
   * Opens the one path to the server: --remote over HTTP, otherwise the embedded handler.
   * `runTurns` lets the embedded host run admitted Turns (only commands that wait for them).
   */
  protected async connect(flags: ConnectionFlags, options: { runTurns?: boolean } = {}): Promise<Connection> {
    if (flags.remote !== undefined) {
      const client = createZeClient({ baseUrl: flags.remote.replace(/\/+$/, ""), token: flags.token });
      this.connection = { client, server: flags.server, local: false, close: async () => {} };
      return this.connection;
    }
    const { createHarness } = await import("../services/host/harness.js");
    const harness = await createHarness({
      database: flags.database,
      configPath: flags.config,
      serverRoot: process.cwd(),
      env: process.env,
      runTurns: options.runTurns ?? false,
    });
    const client = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch });
    this.connection = { client, server: flags.server, local: true, close: () => harness.close() };
    return this.connection;
  }

  protected printJson(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  protected override async finally(error: Error | undefined): Promise<void> {
    await this.connection?.close();
    await super.finally(error);
  }

  protected override async catch(error: Error & { exitCode?: number }): Promise<void> {
    if (error instanceof ZeClientError) {
      process.stderr.write(`error: ${error.body._tag}: ${oneLine(error.message)}\n`);
      this.exit(1);
    }
    await super.catch(error);
  }
}

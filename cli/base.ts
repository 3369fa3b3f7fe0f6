// The one path from a command to the server: the embedded in-process Fetch handler (the
// composition root services/host/harness.ts, loaded only then) or --remote over HTTP, both
// through the generated client.
import { createZeClient, type ZeClient } from "../clients/index.js";
import type { ConnectionValues } from "./spec.js";

export interface Connection {
  readonly client: ZeClient;
  /** The server name every Session call addresses. */
  readonly server: string;
  /** True when the client runs on the same machine as the server (embedded or daemon). */
  readonly local: boolean;
  /**
   * Runs `fn` (calls through `client`) as one unit of work: embedded, every write it makes
   * commits together or not at all (the harness's atomically()); with --remote it just runs `fn`.
   */
  atomically<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Let the embedded host run admitted Turns (only commands that wait for them). */
  readonly runTurns?: boolean;
}

export async function connect(flags: ConnectionValues, options: ConnectOptions = {}): Promise<Connection> {
  const server = flags.server ?? "local";
  if (flags.remote !== undefined) {
    const client = createZeClient({ baseUrl: flags.remote.replace(/\/+$/, ""), token: flags.token });
    return { client, server, local: false, atomically: (fn) => fn(), close: async () => {} };
  }
  const { createHarness } = await import("../services/host/harness.js");
  const harness = await createHarness({
    database: flags.database,
    configPath: flags.config,
    serverRoot: process.cwd(),
    env: process.env,
    runTurns: options.runTurns ?? false,
    // An embedded command runs only the Sessions it operates on; a server runs the rest.
    runnerScope: "owned",
  });
  const client = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch });
  return { client, server, local: true, atomically: (fn) => harness.atomically(fn), close: () => harness.close() };
}

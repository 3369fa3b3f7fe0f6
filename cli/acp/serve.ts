// `ze-harness acp`: the ACP agent on standard input and output over an embedded host. Stdout
// carries only protocol frames: the protocol writer keeps the real stdout, and every other write
// to it (console.log, a plugin, a library) is sent to stderr instead.
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createZeClient, sdk } from "../../clients/index.js";
import { createAcpAgent } from "./agent.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";

const LOCAL_SERVER = "local";

/** The database ACP Sessions use unless --database or ZE_HARNESS_DB names another (relative: in the state directory). */
export const ACP_DATABASE_FILE = "acp.db";

export interface AcpServeOptions {
  readonly database?: string | undefined;
  readonly config?: string | undefined;
  /** `--sandbox MODE` (services/sandbox). */
  readonly sandbox?: SandboxSetting | undefined;
}

export async function serveAcp(options: AcpServeOptions): Promise<number> {
  const stdout = process.stdout;
  const writeFrame = stdout.write.bind(stdout);
  const toStderr = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  stdout.write = toStderr;
  for (const method of ["log", "info", "debug"] as const) console[method] = (...args: unknown[]) => console.error(...args);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);

  // An embedded host of its own (never the daemon): Turns run here, MCP servers attach per Session.
  const { createHarness } = await import("../../services/host/harness.js");
  const harness = await createHarness({
    database: options.database ?? process.env["ZE_HARNESS_DB"] ?? ACP_DATABASE_FILE,
    configPath: options.config,
    sandbox: options.sandbox,
    serverRoot: process.cwd(),
    env: process.env,
    runTurns: true,
    runnerScope: "owned",
    onWarning: log,
  });
  const api = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch });
  try {
    const health = await sdk.health({ client: api.client });
    const version = health.response?.headers.get("ze-harness-version")?.split("/")[1] ?? "unknown";
    const output = new WritableStream<Uint8Array>({
      write: (chunk) => new Promise<void>((resolvePromise, reject) => void writeFrame(chunk, (error) => (error ? reject(error) : resolvePromise()))),
    });
    const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
    const agent = createAcpAgent({ api, server: LOCAL_SERVER, serverRoot: process.cwd(), version, log, mcp: harness.sessionMcp });
    const session = agent.app.connect(acp.ndJsonStream(output, input));
    const stop = (): void => session.close();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    await session.closed;
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await agent.cancelAll();
  } finally {
    // Closing the host stops its runner (a Turn still running then fails with host_shutdown).
    await harness.close();
  }
  return 0;
}

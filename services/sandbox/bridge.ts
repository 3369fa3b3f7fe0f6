// The in-sandbox half of `network: [hosts]`: a few lines of CommonJS that `node -e` runs as the
// sandbox's first program. It listens on 127.0.0.1:BRIDGE_PORT of the sandbox's own network
// namespace, relays each connection to the host proxy's socket (PROXY_SOCKET_INSIDE), and only
// once it listens starts the real command with the same stdio (pipes, the PTY, an MCP server's
// stdin/stdout), in the same process group (so the host's group signals reach it), and exits as
// it did (re-raising a signal that ended it).
import { PROXY_SOCKET_INSIDE } from "./bwrap.js";

/** The port HTTP_PROXY names inside a sandbox (each sandbox has its own network namespace). */
export const BRIDGE_PORT = 3128;

export const BRIDGE_SOURCE = `"use strict";
const net = require("node:net");
const { spawn } = require("node:child_process");
const [socketPath, port, file, ...args] = process.argv.slice(1);
const server = net.createServer((inbound) => {
  const outbound = net.connect(socketPath);
  inbound.on("error", () => outbound.destroy());
  outbound.on("error", () => inbound.destroy());
  inbound.pipe(outbound);
  outbound.pipe(inbound);
});
server.on("error", (error) => {
  process.stderr.write("ze-harness sandbox: the network bridge failed: " + error.message + "\\n");
  process.exit(126);
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(file, args, { stdio: "inherit" });
  const forward = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"];
  for (const signal of forward) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    process.stderr.write("ze-harness sandbox: cannot start " + file + ": " + error.message + "\\n");
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const name of forward) process.removeAllListeners(name);
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(128), 1000).unref();
    } else process.exit(code === null ? 1 : code);
  });
});
`;

/** The argv that runs `argv` behind the bridge, with `node` the host's own binary (visible read-only inside). */
export function bridgedArgv(nodeBinary: string, argv: readonly string[]): string[] {
  return [nodeBinary, "-e", BRIDGE_SOURCE, "--", PROXY_SOCKET_INSIDE, String(BRIDGE_PORT), ...argv];
}

/** The variables that point HTTP clients at the bridge (upper and lower case: tools read either). */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: "", no_proxy: "" };
}

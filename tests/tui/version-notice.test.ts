// Server-version notices in the TUI (reference: client `onServerVersion`; the TUI shows a notice
// when the server's version differs or changes). A real `serve` behind a small HTTP proxy that
// rewrites the `Ze-Harness-Version` header its responses carry: first another release of the
// same protocol, then another protocol. The TUI, connected to the proxy with --remote, says so
// on its notice line; stdout is the terminal, so nothing may land outside the frame.
import http from "node:http";
import { describe, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { HARNESS_PROTOCOL_VERSION } from "../../services/contract/protocol.js";
import { ptyTuiPerTest } from "./pty-support.js";

assertBuilt();

const t = ptyTuiPerTest();

/** A proxy in front of `target` whose responses carry `version()` as their Ze-Harness-Version. */
async function rewritingProxy(target: string, version: () => string): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const server = http.createServer((request, response) => {
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers: { ...request.headers, host: upstream.host } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, { ...answer.headers, "ze-harness-version": version() });
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("server-version notices in the TUI", () => {
  it("shows another release on the notice line, then a protocol change with its warning", async () => {
    let version = `${HARNESS_PROTOCOL_VERSION}/9.9.9`;
    const proxy = await rewritingProxy(await t.serve(), () => version);
    try {
      const tui = t.pty(["--remote", proxy.url]);
      await tui.waitFor(/Ask anything/);
      await tui.waitFor(/Ze Harness 9\.9\.9 \(protocol \d+\)/);
      expect(tui.screen()).not.toMatch(/operations may fail/);
      version = `${HARNESS_PROTOCOL_VERSION + 1}/10.0.0`;
      tui.write("@say After the change.\r");
      await tui.waitFor(/changed from Ze Harness 9\.9\.9 .* to Ze Harness 10\.0\.0/s);
      await tui.waitFor(/operations may fail/);
      tui.write("\u0003");
      expect((await tui.exited).exitCode).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

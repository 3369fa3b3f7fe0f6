// `onServerVersion` (reference, harness-client): "called for the first valid value and each
// subsequent change, on ordinary responses and newly opened SSE streams … Missing or malformed
// headers are ignored. Callback exceptions and protocol/version differences do not reject, retry,
// or cancel API calls." And the notices a surface shows for them (cli/version-notices.ts): the
// CLI's on stderr with stdout untouched, the TUI's on its notice line.
import { createServer, type Server } from "node:http";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createClient, CLIENT_PROTOCOL_VERSION, parseServerVersionHeader, serverVersionNotice, sdk, type ServerVersion } from "../../clients/index.js";
import { VersionNotices } from "../../cli/version-notices.js";
import { PROTOCOL_VERSION } from "../../services/http/index.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { tempHome } from "../support/harness.js";

vi.setConfig({ testTimeout: 60_000 });

/** A server answering GET /v1/servers/local/sessions (and its events stream) with the version header it is told. */
async function versionedServer(): Promise<{ url: string; version: { value: string | undefined }; close(): Promise<void> }> {
  const version: { value: string | undefined } = { value: undefined };
  const server: Server = createServer((request, response) => {
    const headers: Record<string, string> = {};
    if (version.value !== undefined) headers["ze-harness-version"] = version.value;
    if (request.url?.startsWith("/v1/servers/local/events")) {
      response.writeHead(200, { ...headers, "content-type": "text/event-stream" });
      response.end();
      return;
    }
    response.writeHead(200, { ...headers, "content-type": "application/json" });
    response.end(JSON.stringify({ sessions: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, version, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let server: Awaited<ReturnType<typeof versionedServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("parseServerVersionHeader", () => {
  it.each([
    ["2/0.6.0", { protocolVersion: 2, harnessVersion: "0.6.0" }],
    ["1/0.6.0-dev.3+abc", { protocolVersion: 1, harnessVersion: "0.6.0-dev.3+abc" }],
    ["", undefined],
    [null, undefined],
    ["0.6.0", undefined],
    ["x/0.6.0", undefined],
    ["2/", undefined],
    ["2/0.6.0 extra", undefined],
  ])("%j → %j", (value, expected) => {
    expect(parseServerVersionHeader(value)).toEqual(expected);
  });

  it("the host advertises the protocol the client speaks: 2 (nested agent ids)", () => {
    expect(PROTOCOL_VERSION).toBe(2);
    expect(CLIENT_PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
  });
});

describe("onServerVersion", () => {
  it("runs for the first valid value and each change; missing and malformed headers are ignored; a throwing callback fails nothing", async () => {
    server = await versionedServer();
    const seen: ServerVersion[] = [];
    const client = createClient({
      baseUrl: server.url,
      onServerVersion: (version) => {
        seen.push(version);
        throw new Error("an observer's bug");
      },
    });
    expect(await client.listSessions()).toEqual([]); // no header
    server.version.value = "not a version";
    expect(await client.listSessions()).toEqual([]);
    server.version.value = "2/0.6.0";
    await client.listSessions();
    await client.listSessions(); // unchanged: no second call
    server.version.value = "2/0.7.0";
    await client.listSessions();
    expect(seen).toEqual([
      { protocolVersion: 2, harnessVersion: "0.6.0" },
      { protocolVersion: 2, harnessVersion: "0.7.0" },
    ]);
  });

  it("is called for a newly opened SSE stream too", async () => {
    server = await versionedServer();
    server.version.value = "3/1.0.0";
    const seen: ServerVersion[] = [];
    const client = createClient({ baseUrl: server.url, onServerVersion: (version) => seen.push(version) });
    const { stream } = await sdk.watchServer({ client: client.api.client, path: { server: "local" }, sseMaxRetryAttempts: 1 });
    for await (const _ of stream) break;
    expect(seen).toEqual([{ protocolVersion: 3, harnessVersion: "1.0.0" }]);
  });
});

describe("notices", () => {
  const client: ServerVersion = { protocolVersion: 2, harnessVersion: "0.1.0" };

  it("none when the server matches; one when the release differs; a protocol difference warns that operations may fail", () => {
    expect(serverVersionNotice(client, client)).toBeUndefined();
    expect(serverVersionNotice({ protocolVersion: 2, harnessVersion: "0.2.0" }, client)).toBe("The server runs Ze Harness 0.2.0 (protocol 2); this client is Ze Harness 0.1.0 (protocol 2).");
    expect(serverVersionNotice({ protocolVersion: 1, harnessVersion: "0.1.0" }, client)).toBe(
      "The server runs Ze Harness 0.1.0 (protocol 1); this client is Ze Harness 0.1.0 (protocol 2). The protocols differ (server 1, client 2): operations may fail.",
    );
  });

  it("a change (a restarted daemon, a reconnected stream) is a notice even back to this client's version; the TUI's route gets them instead of stderr", () => {
    const notices = new VersionNotices(client);
    const shown: string[] = [];
    notices.route((text) => shown.push(text));
    notices.observe({ protocolVersion: 2, harnessVersion: "0.1.0" });
    notices.observe({ protocolVersion: 2, harnessVersion: "0.2.0" });
    notices.observe({ protocolVersion: 2, harnessVersion: "0.1.0" });
    expect(shown).toEqual([
      "The server changed from Ze Harness 0.1.0 (protocol 2) to Ze Harness 0.2.0 (protocol 2).",
      "The server changed from Ze Harness 0.2.0 (protocol 2) to Ze Harness 0.1.0 (protocol 2).",
    ]);
  });
});

describe("the built CLI", () => {
  beforeAll(() => assertBuilt());

  it("a non-TUI command sends the notice to stderr and leaves stdout its JSON", async () => {
    server = await versionedServer();
    const home = tempHome("ze-version-");
    try {
      const version = (await runCli(["--version"], { env: home.env, cwd: home.root })).stdout.split(" ")[0]!.split("/")[1]!;
      server.version.value = `1/9.9.9`;
      const older = await runCli(["--remote", server.url, "session", "list"], { env: home.env, cwd: home.root });
      expect(older.code).toBe(0);
      expect(JSON.parse(older.stdout)).toEqual([]);
      expect(older.stderr).toBe(`notice: The server runs Ze Harness 9.9.9 (protocol 1); this client is Ze Harness ${version} (protocol 2). The protocols differ (server 1, client 2): operations may fail.\n`);

      server.version.value = `2/${version}`;
      expect(await runCli(["--remote", server.url, "session", "list"], { env: home.env, cwd: home.root })).toMatchObject({ code: 0, stderr: "", stdout: "[]\n" });
    } finally {
      home.cleanup();
    }
  });
});

// The MCP operations through the real HTTP edge (route table, validation, error encoding) with
// every response checked against generated/openapi.json: services/host/mcp-handlers.ts over a
// real McpHost (the everything server), with stand-ins for the Session and Turn services.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, sdk } from "../../clients/index.js";
import { McpHost } from "../../services/mcp/index.js";
import { contractFetch } from "../support/contract.js";
import { composeMcpHandler, everything, remote, repoRoot, type Submitted } from "./support.js";

const SESSION = randomUUID();
const submitted: Submitted[] = [];
let mcp: McpHost;
let fetch: (request: Request) => Promise<Response>;
let client: ReturnType<typeof createZeClient>["client"];

beforeAll(() => {
  mcp = new McpHost({
    env: { PATH: process.env["PATH"] ?? "" },
    cwd: repoRoot,
    servers: [everything(), remote("secure", "http://127.0.0.1:9/mcp", { reconnect: { kind: "manual" } }, { oauth: { kind: "oauth", reference: "r" } })],
    authFile: { path: `/tmp/ze-mcp-handlers-${process.pid}-${Date.now()}/auth.json` },
  });
  fetch = contractFetch(composeMcpHandler(mcp, new Set([SESSION]), submitted));
  client = createZeClient({ baseUrl: "http://localhost", fetch }).client;
});
afterAll(() => mcp.close());

const path = { server: "local", sessionId: SESSION };

describe("MCP handlers", () => {
  it("getMcpCatalog answers the connected servers", async () => {
    const { data, response } = await sdk.getMcpCatalog({ client, path });
    expect(response.status).toBe(200);
    expect(data!.catalog.servers.map((server) => server.name)).toEqual(["everything"]);
    expect(data!.catalog.servers[0]!.catalog.tools.length).toBeGreaterThan(3);
  });

  it("answers 404 for an unknown Session", async () => {
    const { error, response } = await sdk.getMcpCatalog({ client, path: { ...path, sessionId: randomUUID() } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ _tag: "NotFoundError", resource: "session" });
  });

  it("submitMcpPrompt resolves the prompt and admits it through the prompt path", async () => {
    const turnId = randomUUID();
    const { data, response } = await sdk.submitMcpPrompt({
      client,
      path: { ...path, serverName: "everything", promptName: "args-prompt" },
      headers: { "x-ze-harness-client-id": "cli-1" },
      body: { turnId, arguments: { city: "Oslo" }, model: "openai/gpt-5" },
    });
    expect(response.status).toBe(202);
    expect(data!.receipt).toMatchObject({ delivery: "queue", sessionId: SESSION, turnId });
    expect(submitted.at(-1)).toEqual({
      sessionId: SESSION,
      clientId: "cli-1",
      request: { delivery: "queue", turnId, prompt: [{ type: "text", text: "What's weather in Oslo?" }], model: "openai/gpt-5" },
    });
  });

  it("names a missing prompt argument as a JSON pointer, and unknown servers and prompts as 404", async () => {
    const missing = await sdk.submitMcpPrompt({
      client,
      path: { ...path, serverName: "everything", promptName: "args-prompt" },
      headers: { "x-ze-harness-client-id": "cli-1" },
      body: { turnId: randomUUID() },
    });
    expect(missing.response.status).toBe(400);
    expect(missing.error).toMatchObject({ _tag: "ValidationError", message: expect.stringContaining("(/arguments/city)") });
    const server = await sdk.submitMcpPrompt({ client, path: { ...path, serverName: "nope", promptName: "x" }, headers: { "x-ze-harness-client-id": "c" }, body: { turnId: randomUUID() } });
    expect(server.response.status).toBe(404);
    expect(server.error).toMatchObject({ resource: "mcp_server" });
    const prompt = await sdk.submitMcpPrompt({ client, path: { ...path, serverName: "everything", promptName: "nope" }, headers: { "x-ze-harness-client-id": "c" }, body: { turnId: randomUUID() } });
    expect(prompt.response.status).toBe(404);
    expect(prompt.error).toMatchObject({ resource: "mcp_prompt" });
  });

  it("readMcpResource reads an advertised resource; a body without uri is a 400 naming it", async () => {
    const { data } = await sdk.readMcpResource({ client, path: { ...path, serverName: "everything" }, body: { uri: "demo://resource/dynamic/text/2" } });
    expect(data!.resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/2", text: expect.any(String) });
    const unknown = await sdk.readMcpResource({ client, path: { ...path, serverName: "everything" }, body: { uri: "demo://nothing" } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ resource: "mcp_resource" });
    const response = await fetch(
      new Request(`http://localhost/v1/servers/local/sessions/${SESSION}/mcp/everything/resources/read`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).message).toContain("/uri");
  });

  it("credential operations answer secret-free statuses", async () => {
    const status = await sdk.getMcpCredential({ client, path: { ...path, serverName: "secure" } });
    expect(status.data).toEqual({ status: { kind: "absent", generation: 0 } });
    const cancel = await sdk.cancelMcpCredential({ client, path: { ...path, serverName: "secure" }, body: {} });
    expect(cancel.data).toEqual({ status: { kind: "absent", generation: 0 } });
    const forget = await sdk.forgetMcpCredential({ client, path: { ...path, serverName: "secure" }, body: {} });
    expect(forget.data).toEqual({ generation: 1, revocation: "not-applicable" });
    expect((await sdk.getMcpCredential({ client, path: { ...path, serverName: "secure" } })).data).toEqual({ status: { kind: "forgotten", generation: 1, revocation: "not-applicable" } });
    const local = await sdk.startMcpCredential({ client, path: { ...path, serverName: "everything" }, body: {} });
    expect(local.response.status).toBe(409);
    const callback = await sdk.completeMcpCredentialCallback({ client, path: { ...path, serverName: "secure" }, body: { callback: { kind: "success", state: "s", code: "c" } } });
    expect(callback.response.status).toBe(409);
    expect(callback.error).toMatchObject({ _tag: "ConflictError" });
  });
});

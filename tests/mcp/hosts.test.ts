// MCP over Streamable HTTP on both hosts (tests/support/hosts.ts): the same scenarios against
// `ze-harness serve`'s composition (config `mcp`) and the Worker in workerd (`HARNESS_MCP`), with a
// real @modelcontextprotocol/server-everything in its streamable HTTP mode started here in Node.
// A Turn's call to `web_echo` asks its permission and its answer reaches the model; a denied MCP
// Tool is not offered; the server's refusal of a call is the Tool's failure in the Turn; the
// Session's `GET .../mcp` catalog, a resource read, a prompt admitted as a Turn, and the 404 of an
// unknown server name. Both hosts start once (one `beforeAll` per host).
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { queue, replyPermission, runToEnd, seen, waitForTurnEvent } from "../turns/helpers.js";
import { everythingHttp, freePort, remote } from "./support.js";

let everything: Awaited<ReturnType<typeof everythingHttp>>;
/** A loopback address nothing listens on: a server whose connection fails. */
let unreachable: string;

beforeAll(async () => {
  [everything, unreachable] = await Promise.all([everythingHttp(), freePort().then((port) => `http://127.0.0.1:${port}/mcp`)]);
});
afterAll(async () => {
  await everything?.close();
});

const toolParts = (parts: readonly { type: string }[]) => parts.filter((part): part is ToolTurnPart => part.type === "tool");
const offeredTools = (request: unknown): string[] => (((request as { body: { tools?: { function: { name: string } }[] } }).body.tools ?? []).map((tool) => tool.function.name));

describe.each(HOSTS)("MCP over Streamable HTTP on the %s host", (kind) => {
  let h: ModelHost;
  beforeAll(async () => {
    h = await startModelHost(kind, {
      mcp: [remote("web", everything.endpoint), remote("down", unreachable, { reconnect: { kind: "manual" } })],
      permissions: [
        { action: "web_echo", resource: "*", effect: "ask" },
        { action: "web_get-sum", resource: "*", effect: "deny" },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  });
  const client = () => h.api.client;

  it("lists the connected server's catalog and the failed one in GET .../mcp", async () => {
    const sessionId = await h.createSession();
    const { catalog } = await ok(sdk.getMcpCatalog({ client: client(), path: { server: h.server, sessionId } }));
    expect(catalog.servers.map((entry) => [entry.name, entry.origin, entry.protocolVersion])).toEqual([["web", "host", "2025-06-18"]]);
    const web = catalog.servers[0]!.catalog;
    expect(web.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-resource-reference"]));
    expect(web.tools.find((tool) => tool.name === "echo")!.inputSchema).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });
    expect(web.prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt"]));
    expect(web.resourceTemplates.length).toBeGreaterThan(0);
    expect(catalog.unavailable).toEqual([{ origin: "host", serverId: "down", name: "down", order: 0, state: "failed", reason: "connection_failed", retrying: false }]);
    const down = await failure(sdk.readMcpResource({ client: client(), path: { server: h.server, sessionId, serverName: "down" }, body: { uri: "demo://resource/dynamic/text/1" } }));
    // A read of the failed server is a typed 503 naming its state (the runtime's fetch words the cause).
    expect(down).toEqual({
      status: 503,
      body: { _tag: "UnavailableError", reason: "service_unavailable", message: expect.stringMatching(/^MCP server "down" is not connected \(connection_failed: .+\)$/) },
    });
    // An unknown Session or server name is a 404.
    expect((await failure(sdk.getMcpCatalog({ client: client(), path: { server: h.server, sessionId: randomUUID() } }))).status).toBe(404);
    expect((await failure(sdk.readMcpResource({ client: client(), path: { server: h.server, sessionId, serverName: "nope" }, body: { uri: "demo://resource/dynamic/text/1" } }))).status).toBe(404);
  });

  it("asks the permission of web_echo in a Turn, runs it on a `once` reply, and returns its answer to the model; a denied MCP Tool is not offered", async () => {
    const model = h.fresh().model;
    model.enqueue({ events: [{ type: "tool_call", name: "web_echo", arguments: { message: `hello on ${kind}` } }] }, { events: [{ type: "text", text: "Echoed." }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Echo something");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    expect(asked.request).toMatchObject({ sessionId, turnId, toolId: "web_echo", action: "web_echo", resources: ["*"] });
    const offered = offeredTools(model.requests[0]);
    expect(offered).toEqual(expect.arrayContaining(["web_echo", "web_get-resource-reference"]));
    expect(offered).not.toContain("web_get-sum");
    expect(offered.some((name) => name.startsWith("down_"))).toBe(false);
    await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Echoed." });
    const [part] = toolParts(turn.parts);
    expect(part).toMatchObject({ toolId: "web_echo", state: "completed", approval: { state: "resolved", decision: "allow", reply: "once" } });
    expect(JSON.stringify(part!.canonicalResult)).toContain(`Echo: hello on ${kind}`);
    expect(seen(model.requests[1])).toContain(`Echo: hello on ${kind}`);
  });

  it("makes the server's refusal of a call the Tool's failure, reported to the model", async () => {
    const model = h.fresh().model;
    model.enqueue({ events: [{ type: "tool_call", name: "web_get-resource-reference", arguments: { resourceType: "Text", resourceId: -1 } }] }, { events: [{ type: "text", text: "It failed." }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Fetch a resource reference");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "It failed." });
    const [part] = toolParts(turn.parts);
    expect(part).toMatchObject({
      toolId: "web_get-resource-reference",
      state: "failed",
      approval: { state: "none" },
      fault: { code: "mcp_tool_error", message: "Invalid resourceId: -1. Must be a finite positive integer." },
    });
    expect(seen(model.requests[1])).toContain("Invalid resourceId: -1");
  });

  it("reads a resource, and admits a prompt resolved by the server as a Turn of the Session", async () => {
    const sessionId = await h.createSession();
    const read = await ok(sdk.readMcpResource({ client: client(), path: { server: h.server, sessionId, serverName: "web" }, body: { uri: "demo://resource/dynamic/text/3" } }));
    expect(read.resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3", text: expect.stringMatching(/^Resource 3: This is a plaintext resource/) });

    const model = h.fresh().model;
    model.enqueue({ events: [{ type: "text", text: "Sunny." }] });
    const turnId = randomUUID();
    const submitted = await ok(
      sdk.submitMcpPrompt({
        client: client(),
        path: { server: h.server, sessionId, serverName: "web", promptName: "args-prompt" },
        headers: { "x-ze-harness-client-id": "test" },
        body: { turnId, arguments: { city: "Oslo" } },
      }),
    );
    expect(submitted.receipt).toMatchObject({ sessionId, turnId });
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Sunny." });
    expect(seen(model.requests[0])).toContain("What's weather in Oslo?");
    // A prompt the server does not have is a typed failure, and admits nothing.
    const missing = await failure(
      sdk.submitMcpPrompt({
        client: client(),
        path: { server: h.server, sessionId, serverName: "web", promptName: "no-such-prompt" },
        headers: { "x-ze-harness-client-id": "test" },
        body: { turnId: randomUUID() },
      }),
    );
    expect(missing).toEqual({ status: 404, body: { _tag: "NotFoundError", message: 'MCP server "web" has no prompt "no-such-prompt"', resource: "mcp_prompt" } });
    expect(model.requests).toHaveLength(1);
  });
});

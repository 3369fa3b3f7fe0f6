// MCP servers a Session plugin declares on the Node host: a revision of the declarative static
// Session plugin whose `mcpServers` names a real server-everything over Streamable HTTP, and a
// File Session plugin whose setup calls `context.mcp.register` for it. Their Turns
// are offered `<server>_<tool>` (the call runs and its answer reaches the model), its catalog lists
// the server with origin `session`; another Session of the same server sees none of it; once the
// plugin is removed, the next Turn is offered nothing of it.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { DECLARATIVE_SESSION_PLUGIN } from "../../services/host/plugin-handlers.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { everythingHttp, remote } from "./support.js";

const offeredTools = (request: unknown): string[] => ((request as { body: { tools?: { function: { name: string } }[] } }).body.tools ?? []).map((tool) => tool.function.name);

let everything: Awaited<ReturnType<typeof everythingHttp>>;
let h: ModelHarness;
beforeAll(async () => {
  everything = await everythingHttp();
  h = await startModelHarness({});
}, 60_000);
afterAll(async () => {
  await h?.close();
  await everything?.close();
});

describe("MCP servers a Session plugin declares (Node host)", () => {
  it("connects them for that Session's Turns and catalog only, and drops them with the plugin", async () => {
    const sessionId = await h.createSession();
    const other = await h.createSession();
    const revision = randomUUID();
    await ok(
      sdk.addSessionPlugin({
        client: h.api.client,
        path: { server, sessionId },
        body: { id: revision, source: { _tag: "Static", id: DECLARATIVE_SESSION_PLUGIN }, resolved: { pluginId: DECLARATIVE_SESSION_PLUGIN }, options: {}, mcpServers: [{ ...remote("plug", everything.endpoint, { protocolVersions: ["2025-06-18"] }, { headers: {} }) } as never], skills: [] },
      }),
    );

    h.model.enqueue({ events: [{ type: "tool_call", name: "plug_echo", arguments: { message: "hello from a Session plugin" } }] }, { events: [{ type: "text", text: "echoed" }] });
    const first = h.model.requests.length;
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "echo it")).turnId);
    expect(offeredTools(h.model.requests[first])).toContain("plug_echo");
    const part = turn.parts.find((candidate): candidate is ToolTurnPart => candidate.type === "tool")!;
    expect(part).toMatchObject({ toolId: "plug_echo", state: "completed" });
    expect(JSON.stringify(h.model.requests[first + 1]!.body)).toContain("hello from a Session plugin");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "echoed" });

    const { catalog } = await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId } }));
    expect(catalog.servers.map((entry) => [entry.name, entry.origin])).toEqual([["plug", "session"]]);

    // Another Session of the same server is offered and lists nothing of it.
    h.model.enqueue({ events: [{ type: "text", text: "plain" }] });
    const before = h.model.requests.length;
    await runToEnd(h, other, (await queue(h, other, "anything?")).turnId);
    expect(offeredTools(h.model.requests[before]).some((name) => name.startsWith("plug_"))).toBe(false);
    const otherCatalog = await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId: other } }));
    expect(otherCatalog.catalog.servers).toEqual([]);

    // Removed: the next Turn of the Session is offered none of its Tools.
    await ok(sdk.removeSessionPlugin({ client: h.api.client, path: { server, sessionId }, body: {} }));
    h.model.enqueue({ events: [{ type: "text", text: "gone" }] });
    const after = h.model.requests.length;
    await runToEnd(h, sessionId, (await queue(h, sessionId, "still there?")).turnId);
    expect(offeredTools(h.model.requests[after]).some((name) => name.startsWith("plug_"))).toBe(false);
  });

  it("connects the servers a File Session plugin registers with context.mcp.register", async () => {
    const sessionId = await h.createSession();
    const file = join(h.home.root, "session-mcp.mjs");
    const definition = { kind: "remote", id: "coded", name: "coded", protocolVersions: ["2025-06-18"], transport: { kind: "streamable-http", endpoint: everything.endpoint, headers: {} } };
    writeFileSync(file, `export default { id: "session.mcp", setup(c) { c.mcp.register(${JSON.stringify(definition)}); } };`);
    await ok(sdk.addSessionPlugin({ client: h.api.client, path: { server, sessionId }, body: { id: randomUUID(), source: { _tag: "File", uri: pathToFileURL(file).href }, resolved: { pluginId: "session.mcp" }, options: {}, mcpServers: [], skills: [] } }));

    h.model.enqueue({ events: [{ type: "tool_call", name: "coded_echo", arguments: { message: "registered in setup" } }] }, { events: [{ type: "text", text: "done" }] });
    const first = h.model.requests.length;
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "echo it")).turnId);
    expect(offeredTools(h.model.requests[first])).toContain("coded_echo");
    expect(turn.parts.find((candidate): candidate is ToolTurnPart => candidate.type === "tool")).toMatchObject({ toolId: "coded_echo", state: "completed" });
    expect(JSON.stringify(h.model.requests[first + 1]!.body)).toContain("registered in setup");
    const { catalog } = await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId } }));
    expect(catalog.servers.map((entry) => [entry.name, entry.origin])).toEqual([["coded", "session"]]);
  });
});

// The three extensions over a real `serve` process: a configured plugin's tool, a configured MCP
// server's tool (the real `server-everything` over stdio) and a CodeMode script that calls both,
// each inner call authorized by the server and recorded as its own part.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { assertBuilt } from "../support/cli.js";
import { EVERYTHING } from "../mcp/support.js";
import { createSession, processResources, queue, runToEnd, serveWithModel, server } from "../turns/helpers.js";

vi.setConfig({ testTimeout: 60_000 });
const resources = processResources("ze-extensions-serve-");

const PLUGIN = `export default { id: "example.double", setup(context) {
  context.tools.register({ id: "double", description: "Double a number",
    inputSchema: { type: "object", properties: { value: { type: "number" } }, required: ["value"], additionalProperties: false },
    execute: async (input) => ({ value: input.value * 2 }) });
} };`;

describe("extensions over a real serve", () => {
  it("a script calls a plugin tool and an MCP tool, every call its own authorized part", async () => {
    assertBuilt();
    const { home, model, database } = await resources.setup();
    const pluginFile = join(home.dir, "double.mjs");
    writeFileSync(pluginFile, PLUGIN);
    const served = await serveWithModel(home, model, database, {
      plugins: [pluginFile],
      mcp: [{ kind: "local", id: "everything", name: "everything", transport: { kind: "stdio", command: process.execPath, arguments: [EVERYTHING, "stdio"] } }],
    });
    resources.cleanups.push(() => served.process.stop());
    const sessionId = await createSession(served);
    await ok(sdk.getMcpCatalog({ client: served.api.client, path: { server, sessionId } }));
    const code = `const doubled = await tools.double({ value: 21 });
      const echoed = await tools.everything_echo({ message: "from a script" });
      return { doubled: doubled.value, echoed: JSON.stringify(echoed).includes("from a script") };`;
    model.enqueue({ events: [{ type: "tool_call", name: "execute", arguments: { code } }] }, { events: [{ type: "text", text: "both worked" }] });
    const { turn } = await runToEnd(served, sessionId, (await queue(served, sessionId, "combine")).turnId);
    const parts = turn.parts.filter((part): part is ToolTurnPart => part.type === "tool");
    expect(parts.find((part) => part.toolId === "execute")).toMatchObject({ state: "completed", execution: { result: { doubled: 42, echoed: true } } });
    expect(parts.filter((part) => part.origin?.kind === "codemode").map((part) => [part.toolId, part.state])).toEqual([
      ["double", "completed"],
      ["everything_echo", "completed"],
    ]);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "both worked" });
    const plugins = await ok(sdk.plugins({ client: served.api.client }));
    expect(plugins.plugins).toEqual([expect.objectContaining({ status: "active", registrations: ["tool:double"] })]);
  });
});

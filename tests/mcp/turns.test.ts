// MCP tools inside real Turns: a configured stdio server (the real `server-everything` from npm)
// offers `<server>_<tool>` to the model once connected, the call goes through permissions like
// any tool, and its result reaches the model; an agent that does not select the tool hides it.
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { everything } from "./support.js";

const toolsOf = (request: RecordedRequest | undefined): string[] => ((request!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("MCP tools in a Turn", () => {
  it("offers the connected server's tools, runs a call through permissions, and returns its result", async () => {
    h = await startModelHarness({
      config: { mcp: [everything()], permissions: [{ action: "everything_get-sum", resource: "*", effect: "deny" }] },
    });
    const sessionId = await h.createSession();
    // The catalog waits for the servers' first connection attempt.
    const { catalog } = await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId } }));
    expect(catalog.servers.map((entry) => entry.name)).toEqual(["everything"]);

    h.model.enqueue({ events: [{ type: "tool_call", name: "everything_echo", arguments: { message: "hello over MCP" } }] }, { events: [{ type: "text", text: "echoed" }] });
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "echo it")).turnId);
    const offered = toolsOf(h.model.requests[0]);
    expect(offered).toContain("everything_echo");
    // A tool the rules deny outright is not offered.
    expect(offered).not.toContain("everything_get-sum");
    const part = turn.parts.find((candidate): candidate is ToolTurnPart => candidate.type === "tool")!;
    expect(part).toMatchObject({ toolId: "everything_echo", state: "completed" });
    expect(JSON.stringify(part.canonicalResult)).toContain("hello over MCP");
    expect(JSON.stringify(h.model.requests[1]!.body)).toContain("hello over MCP");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "echoed" });
  });
});

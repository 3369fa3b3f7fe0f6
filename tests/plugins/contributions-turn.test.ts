// What a plugin registers reaches real Turns: a Skill (listed to the model, loaded by `skill`),
// an MCP server (the real `server-everything`, its tools offered as `<name>_<tool>`), and an agent.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { EVERYTHING } from "../mcp/support.js";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const plugin = (file: string) => `
export default {
  id: "example.contributions",
  setup(context) {
    context.skills.register({
      id: "deploy-checklist",
      displayName: "Deploy checklist",
      description: "How this team deploys",
      body: "PLUGIN-SKILL-BODY: run the tests, then tag.",
      version: "1.0.0",
      modelAdvertisement: { advertised: true, userInvocable: true },
      publicMetadata: { tags: [] },
    });
    context.mcp.register({
      kind: "local",
      id: "plugged",
      name: "plugged",
      protocolVersions: ["2025-06-18"],
      transport: { kind: "stdio", command: ${JSON.stringify(process.execPath)}, arguments: [${JSON.stringify(file)}, "stdio"], environment: {} },
    });
    context.agents.register({ id: "reviewer", displayName: "Reviewer", description: "Reviews changes", mode: "primary", instructions: [{ role: "system", text: "PLUGIN-AGENT-INSTRUCTIONS" }] });
  },
};
`;

describe("plugin contributions in a Turn", () => {
  it("a plugin's Skill, MCP server and agent", async () => {
    h = await startModelHarness();
    // The plugin file must exist before the host starts: start a second host on the same home.
    const file = join(h.home.dir, "contributions.mjs");
    writeFileSync(file, plugin(EVERYTHING));
    writeFileSync(join(h.home.root, "ze-harness.config.json"), JSON.stringify({ plugins: [file] }));
    await h.harness.close();
    const { startHarness } = await import("../support/harness.js");
    const second = await startHarness({}, h.home);
    try {
      const api = { api: second.api, fetch: second.fetch };
      const sessionId = crypto.randomUUID();
      await ok(sdk.createSession({ client: api.api.client, path: { server, sessionId }, body: {} }));
      const { catalog } = await ok(sdk.getMcpCatalog({ client: api.api.client, path: { server, sessionId } }));
      expect(catalog.servers.map((entry) => entry.name)).toContain("plugged");
      const skills = await ok(sdk.sessionSkills({ client: api.api.client, path: { server, sessionId } }));
      expect(skills.skills.map((skill) => skill.id)).toContain("deploy-checklist");
      const agents = await ok(sdk.sessionAgents({ client: api.api.client, path: { server, sessionId } }));
      expect(agents.agents.map((agent) => agent.id)).toContain("reviewer");

      h.model.enqueue(
        { events: [{ type: "tool_call", name: "skill", arguments: { name: "deploy-checklist" } }] },
        { events: [{ type: "tool_call", name: "plugged_echo", arguments: { message: "via plugin" } }] },
        { events: [{ type: "text", text: "done" }] },
      );
      const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "deploy", { agent: "reviewer" })).turnId);
      const system = JSON.stringify((h.model.requests[0]!.body as { messages: unknown[] }).messages[0]);
      expect(system).toContain("PLUGIN-AGENT-INSTRUCTIONS");
      expect(system).toContain("deploy-checklist");
      const [skill, echo] = turn.parts.filter((part): part is ToolTurnPart => part.type === "tool");
      expect(String((skill!.canonicalResult as { value: string }).value)).toContain("PLUGIN-SKILL-BODY");
      expect(echo).toMatchObject({ toolId: "plugged_echo", state: "completed" });
      expect(JSON.stringify(echo!.canonicalResult)).toContain("via plugin");
    } finally {
      await second.harness.close();
    }
  });
});

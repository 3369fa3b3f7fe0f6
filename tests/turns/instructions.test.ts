import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, unwrap } from "../../clients/index.js";
import { createHarness } from "../../services/host/harness.js";
import { tempHome } from "../support/harness.js";
import { startModelHarness, writeGlobalConfig, type ModelHarness } from "../support/model.js";

type ChatBody = { messages: { role: string; content: unknown }[] };

const systemText = (body: ChatBody): string =>
  body.messages
    .filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)))
    .join("\n");

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("model request instructions", () => {
  it("sends the Session system prompt and the workdir's AGENTS.md, re-read for every prompt", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "AGENTS.md"), "Always answer in French.");
    const sessionId = await h.createSession({ systemPrompt: "You are terse." });
    h.model.enqueue({ events: [{ type: "text", text: "Bonjour." }] }, { events: [{ type: "text", text: "Salut." }] });
    await h.finish(sessionId, await h.submit(sessionId, "Hi"));
    const first = systemText(h.model.requests[0]!.body as ChatBody);
    expect(first).toContain("You are terse.");
    expect(first).toContain("Always answer in French.");

    writeFileSync(join(h.home.root, "AGENTS.md"), "Always answer in Spanish.");
    await h.finish(sessionId, await h.submit(sessionId, "Hi again"));
    const second = systemText(h.model.requests[1]!.body as ChatBody);
    expect(second).toContain("Always answer in Spanish.");
    expect(second).not.toContain("French");
  });

  it("refuses a prompt while AGENTS.md is over 50 KiB, admitting nothing, and accepts one at exactly the limit", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "AGENTS.md"), `${"a".repeat(51_200)}!`);
    const sessionId = await h.createSession();
    await expect(h.submit(sessionId, "Hi")).rejects.toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("51200") } });
    const listed = await unwrap(sdk.listSessionTurns({ client: h.api.client, path: { server: "local", sessionId } }));
    expect(listed.turns).toEqual([]);

    writeFileSync(join(h.home.root, "AGENTS.md"), `${"a".repeat(51_200 - "TAIL-MARKER".length)}TAIL-MARKER`);
    h.model.enqueue({ events: [{ type: "text", text: "ok" }] });
    await h.finish(sessionId, await h.submit(sessionId, "Hi"));
    expect(systemText(h.model.requests[0]!.body as ChatBody)).toContain("TAIL-MARKER");
  });

  it("keeps the AGENTS.md read at admission with the Turn, even when the file changes before it runs", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "AGENTS.md"), "Answer in French.");
    const sessionId = await h.createSession();
    h.model.enqueue({ hang: true }, { events: [{ type: "text", text: "ok" }] });
    const first = await h.submit(sessionId, "first");
    await h.model.waitForRequest(1);
    const second = await h.submit(sessionId, "second");
    writeFileSync(join(h.home.root, "AGENTS.md"), "Answer in German.");
    await unwrap(sdk.cancelTurn({ client: h.api.client, path: { server: "local", sessionId, turnId: first }, body: {} }));
    await h.finish(sessionId, second);
    const system = systemText(h.model.requests[1]!.body as ChatBody);
    expect(system).toContain("French");
    expect(system).not.toContain("German");
  });

  it("sends the earlier Turns of the Session as history", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    h.model.enqueue({ events: [{ type: "text", text: "The capital is Paris." }] }, { events: [{ type: "text", text: "About 2 million." }] });
    await h.finish(sessionId, await h.submit(sessionId, "Capital of France?"));
    await h.finish(sessionId, await h.submit(sessionId, "Its population?"));
    const history = JSON.stringify((h.model.requests[1]!.body as ChatBody).messages);
    expect(history).toContain("Capital of France?");
    expect(history).toContain("The capital is Paris.");
    expect(history).toContain("Its population?");
  });
});

describe("provider configuration at startup", () => {
  it("fails startup on an empty providers map with a typed error", async () => {
    const home = tempHome();
    try {
      writeGlobalConfig(home, { providers: {} });
      await expect(createHarness({ serverRoot: home.root, env: home.env, database: ":memory:" })).rejects.toMatchObject({ name: "ProvidersEmpty" });
    } finally {
      home.cleanup();
    }
  });
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

  it("applies at most 50 KiB of AGENTS.md", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "AGENTS.md"), `${"a".repeat(60 * 1024)}TAIL-MARKER`);
    const sessionId = await h.createSession();
    h.model.enqueue({ events: [{ type: "text", text: "ok" }] });
    await h.finish(sessionId, await h.submit(sessionId, "Hi"));
    const system = systemText(h.model.requests[0]!.body as ChatBody);
    expect(system).not.toContain("TAIL-MARKER");
    expect(system).toContain("truncated");
    expect(system.length).toBeLessThan(52 * 1024);
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

// The MCP servers a Session plugin declares on the Node host stop with their Session however it is
// deleted: a Session deleted with its whole server (`deleteServer`), or as the spawned child of a
// deleted parent, never leaves its stdio server running (each deleted id closes its Session's
// declared and attached McpHosts, services/host/harness.ts `onDeleted`).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { DECLARATIVE_SESSION_PLUGIN } from "../../services/host/plugin-handlers.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { server } from "../turns/helpers.js";
import { fixture, processesWith } from "./support.js";

/** The silent fixture (never answers) as a Session plugin declares it; `marker` names its process. */
const declared = (marker: string) => {
  const base = fixture("silent", "silent.mjs", [marker]);
  return { ...base, protocolVersions: ["2025-06-18"], transport: { ...base.transport, environment: {} } };
};

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness({});
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("a deleted Session's plugin-declared MCP servers (Node host)", () => {
  it("are closed when the Session goes with its server (deleteServer)", async () => {
    const marker = `ze-declared-${randomUUID()}`;
    const sessionId = await h.createSession();
    await ok(
      sdk.addSessionPlugin({
        client: h.api.client,
        path: { server, sessionId },
        body: { id: randomUUID(), source: { _tag: "Static", id: DECLARATIVE_SESSION_PLUGIN }, resolved: { pluginId: DECLARATIVE_SESSION_PLUGIN }, options: {}, mcpServers: [declared(marker) as never], skills: [] },
      }),
    );
    // The catalog read starts the Session's declared server: its process runs.
    await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId } }));
    await expect.poll(() => processesWith(marker).length, { timeout: 20_000 }).toBe(1);

    const { deleted } = await ok(sdk.deleteServer({ client: h.api.client, path: { server } }));
    expect(deleted.sessionIds).toContain(sessionId);
    await expect.poll(() => processesWith(marker), { timeout: 20_000 }).toEqual([]);
  }, 60_000);
});

// Plugins that never finish loading: a module whose evaluation never settles (a top-level await on
// nothing) and a setup that never resolves, as real files in a temp dir. The activation bounds
// both (the module's load has the setup's limit: it used to hold the activation forever), reports
// where each plugin stands while a generation activates, and a host that already serves keeps
// serving when its first generation does not activate. A host with `backgroundPlugins` (a server)
// returns at once, answers health and status reads while a plugin hangs, and holds the operations
// that draw on plugins until the activation settled. `serve` itself is in extensions/hung-serve.test.ts.
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type RuntimePlugin, type ToolTurnPart } from "../../clients/index.js";
import { configCandidates, PENDING_MESSAGES, pluginEntriesFromLayers, PluginRuntime, unavailableCapabilities, type PluginCandidate } from "../../services/plugins/index.js";
import { ok } from "../support/calls.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { EVERYTHING } from "../mcp/support.js";
import { doublingPlugin, pluginDir, type PluginDir } from "./helpers.js";

/** A module that never finishes evaluating. */
const NEVER_LOADS = `await new Promise(() => {});\nexport default { id: "never.loads", setup() {} };\n`;
/** A plugin whose setup never settles. */
const NEVER_SETS_UP = `export default { id: "never.setup", setup() { return new Promise(() => {}); } };\n`;

/**
 * A gate a plugin's setup waits on: the setup connects to `port` (so the test knows it runs) and
 * resolves when the test releases the gate. No timers on either side.
 */
interface Gate {
  readonly port: number;
  /** Resolves once the plugin's setup is waiting at the gate. */
  readonly reached: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function gate(): Promise<Gate> {
  let socket: Socket | undefined;
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  const tcp: Server = createServer((connection) => {
    socket = connection;
    reached();
  });
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
  return {
    port: (tcp.address() as { port: number }).port,
    reached: waiting,
    release: () => socket!.end("go"),
    close: () => new Promise((resolve) => tcp.close(() => resolve())),
  };
}

/** A plugin that registers `extra` and a `gated_double` tool, then waits at the gate in `options.port`. */
const gatedPlugin = (extra = "") => `
import { connect } from "node:net";
export default {
  id: "example.gated",
  setup(context) {
    context.tools.register({
      id: "gated_double",
      description: "Double a number",
      inputSchema: { type: "object", properties: { value: { type: "number" } }, required: ["value"], additionalProperties: false },
      execute: async (input) => ({ value: input.value * 2 }),
    });
    ${extra}
    return new Promise((resolve) => {
      const socket = connect(Number(context.options.port), "127.0.0.1");
      socket.on("data", () => resolve());
      socket.on("error", () => resolve());
    });
  },
};
`;

let dir: PluginDir;
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  dir?.cleanup();
});

function candidatesOf(entries: readonly (string | { source: string; options: Record<string, unknown> })[]): PluginCandidate[] {
  return configCandidates(pluginEntriesFromLayers([{ file: join(dir.dir, "ze-harness.config.json"), config: { plugins: entries as never } }]), dir.dir);
}

describe("a plugin that never finishes loading", () => {
  it("fails a module that never loads and a setup that never settles within the setup limit; the rest activate", async () => {
    dir = pluginDir("ze-hung-plugins-");
    dir.write("never-loads.mjs", NEVER_LOADS);
    dir.write("never-setup.mjs", NEVER_SETS_UP);
    dir.write("first.mjs", doublingPlugin("plugin.first", "first_double"));
    dir.write("last.mjs", doublingPlugin("plugin.last", "last_double"));
    const started = await PluginRuntime.start({
      source: () => ({ ok: true, candidates: candidatesOf(["./first.mjs", "./never-loads.mjs", "./never-setup.mjs", "./last.mjs"]) }),
      capabilities: unavailableCapabilities(),
      setupTimeoutMs: 200,
    });
    expect(started.ok).toBe(true);
    if (!started.ok) return;
    cleanups.push(() => started.runtime.close());
    expect(started.runtime.plugins().map((plugin) => [plugin.pluginId ?? plugin.source.split("/").pop(), plugin.status, plugin.error])).toEqual([
      ["plugin.first", "active", undefined],
      ["never-loads.mjs", "failed", "The plugin module did not load within 200 ms."],
      ["never.setup", "failed", "Plugin setup did not finish within 200 ms."],
      ["plugin.last", "active", undefined],
    ]);
    expect(started.runtime.current.tools.map((tool) => tool.id)).toEqual(["first_double", "last_double"]);
  });

  it("reports where each plugin stands while the generation activates", async () => {
    dir = pluginDir("ze-hung-plugins-");
    const held = await gate();
    cleanups.push(() => held.close());
    dir.write("first.mjs", doublingPlugin("plugin.first", "first_double"));
    dir.write("gated.mjs", gatedPlugin());
    dir.write("last.mjs", doublingPlugin("plugin.last", "last_double"));
    const seen: (readonly RuntimePlugin[])[] = [];
    const starting = PluginRuntime.start(
      { source: () => ({ ok: true, candidates: candidatesOf(["./first.mjs", { source: "./gated.mjs", options: { port: held.port } }, "./last.mjs"]) }), capabilities: unavailableCapabilities() },
      (plugins) => seen.push(plugins),
    );
    await held.reached;
    expect(seen.at(-1)!.map((plugin) => [plugin.pluginId, plugin.status, plugin.error])).toEqual([
      ["plugin.first", "failed", PENDING_MESSAGES.activated],
      [undefined, "failed", PENDING_MESSAGES.current],
      [undefined, "failed", PENDING_MESSAGES.waiting],
    ]);
    expect(seen.at(-1)!.every((plugin) => plugin.generationId === "host-1" && plugin.registrations.length === 0)).toBe(true);
    held.release();
    const started = await starting;
    if (!started.ok) throw new Error(started.message);
    cleanups.push(() => started.runtime.close());
    expect(started.runtime.plugins().map((plugin) => plugin.status)).toEqual(["active", "active", "active"]);
  });

  it("startWithout keeps a runtime with no plugins when the first generation is rejected, until a reload activates one", async () => {
    dir = pluginDir("ze-hung-plugins-");
    dir.write("plugin.mjs", `export default { id: "Bad Id", setup() {} };`);
    const { runtime, rejection } = await PluginRuntime.startWithout({ source: () => ({ ok: true, candidates: candidatesOf(["./plugin.mjs"]) }), capabilities: unavailableCapabilities() });
    cleanups.push(() => runtime.close());
    expect(rejection?.message).toContain("Invalid plugin id");
    expect(runtime.current.tools).toEqual([]);
    expect(runtime.plugins()).toEqual([expect.objectContaining({ status: "failed", error: expect.stringContaining("Invalid plugin id") })]);
    dir.write("plugin.mjs", doublingPlugin("plugin.fixed"));
    expect((await runtime.reload()).result).toBe("reloaded");
    expect(runtime.plugins()).toEqual([expect.objectContaining({ pluginId: "plugin.fixed", status: "active" })]);
  });
});

describe("a host with backgroundPlugins", () => {
  let model: TestModel;
  async function host(plugins: unknown[], warnings: string[] = []): Promise<TestHarness> {
    model = await startTestModel();
    cleanups.push(() => model.close());
    const home = tempHome("ze-hung-host-");
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), plugins });
    const started = await startHarness({ backgroundPlugins: true, onWarning: (message) => warnings.push(message) }, home);
    cleanups.push(() => started.close());
    return started;
  }

  it("answers at once while a plugin's setup waits, and holds what needs plugins until it activated", async () => {
    dir = pluginDir("ze-hung-plugins-");
    const held = await gate();
    cleanups.push(() => held.close());
    const mcp = `context.mcp.register({ kind: "local", id: "plugged", name: "plugged", protocolVersions: ["2025-06-18"], transport: { kind: "stdio", command: ${JSON.stringify(process.execPath)}, arguments: [${JSON.stringify(EVERYTHING)}, "stdio"], environment: {} } });
    context.agents.register({ id: "gated-agent", displayName: "Gated", description: "Waits at the gate", mode: "primary", instructions: [{ role: "system", text: "GATED-AGENT" }] });`;
    const file = dir.write("gated.mjs", gatedPlugin(mcp));
    // The harness is returned while the plugin's setup is still waiting at the gate.
    const h = await host([{ source: file, options: { port: held.port } }]);
    await held.reached;
    const client = h.api.client;

    const sessionId = randomUUID();
    let created = false;
    const creating = ok(sdk.createSession({ client, path: { server, sessionId }, body: { agent: "gated-agent" } })).then((result) => ((created = true), result));
    expect(await ok(sdk.health({ client }))).toEqual({ status: "ok" });
    expect((await ok(sdk.plugins({ client }))).plugins).toEqual([{ source: file, generationId: "host-1", status: "failed", registrations: [], error: PENDING_MESSAGES.current }]);
    expect((await ok(sdk.listSessions({ client, path: { server } }))).sessions.map((session) => session.id)).not.toContain(sessionId);
    // Creating a Session with the plugin's Agent waits for the activation instead of failing.
    expect(created).toBe(false);

    held.release();
    expect((await creating).session).toMatchObject({ id: sessionId, agent: "gated-agent" });
    expect((await ok(sdk.plugins({ client }))).plugins).toEqual([expect.objectContaining({ pluginId: "example.gated", status: "active", registrations: expect.arrayContaining(["tool:gated_double", "mcp:plugged"]) })]);
    // The plugin's MCP server joined once the generation settled.
    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server, sessionId } }));
    expect(catalog.servers.map((entry) => entry.name)).toEqual(["plugged"]);

    model.enqueue({ events: [{ type: "tool_call", name: "gated_double", arguments: { value: 21 } }] }, { events: [{ type: "text", text: "doubled" }] });
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "double it")).turnId);
    expect(turn.parts.find((part): part is ToolTurnPart => part.type === "tool")).toMatchObject({ toolId: "gated_double", state: "completed" });
    expect(JSON.stringify((model.requests[0]!.body as { messages: unknown[] }).messages[0])).toContain("GATED-AGENT");
  });

  it("keeps serving without plugins when the first generation does not activate, and says so", async () => {
    dir = pluginDir("ze-hung-plugins-");
    const file = dir.write("bad.mjs", `export default { id: "Bad Id", setup() {} };`);
    const warnings: string[] = [];
    const h = await host([file], warnings);
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client: h.api.client, path: { server, sessionId }, body: {} }));
    expect((await ok(sdk.plugins({ client: h.api.client }))).plugins).toEqual([expect.objectContaining({ source: file, status: "failed", error: expect.stringContaining("Invalid plugin id") })]);
    expect(warnings).toEqual([expect.stringMatching(/^Plugins did not activate; serving without them until a reload activates them: .*Invalid plugin id/)]);
    model.enqueue({ events: [{ type: "text", text: "still here" }] });
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "hello")).turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "still here" });
  });
});

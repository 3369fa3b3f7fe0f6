// Observational subscribers (`context.events.subscribe`), through a real plugin file loaded by
// config as a plugin author writes it: they receive the reference's Turn events in order
// (`turn.started` first, `turn.terminal` last), each subscriber its own copy, a throwing one
// ignored; and each Turn's queue holds `observerBufferSize` events, dropping the oldest when a
// subscriber falls behind — the Turn never waits for it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd } from "../turns/helpers.js";

let h: ModelHarness | undefined;
let second: Awaited<ReturnType<typeof import("../support/harness.js").startHarness>> | undefined;
afterEach(async () => {
  await second?.harness.close();
  second = undefined;
  await h?.close();
  h = undefined;
});

interface Seen {
  readonly type: string;
  readonly [key: string]: unknown;
}
const shared = globalThis as unknown as { zeSeen?: { first: Seen[]; second: Seen[] }; zeGate?: Promise<void> };

const plugin = `
export default {
  id: "example.observer",
  setup(context) {
    const seen = (globalThis.zeSeen ??= { first: [], second: [] });
    context.events.subscribe(async (event) => {
      if (globalThis.zeGate && event.type !== "turn.started") await globalThis.zeGate;
      seen.first.push(event);
      event.type = "changed-by-the-first";
    });
    context.events.subscribe(() => {
      throw new Error("an observer's own failure");
    });
    context.events.subscribe((event) => void seen.second.push(event));
  },
};
`;

async function start(config: Record<string, unknown>): Promise<NonNullable<typeof second>> {
  h = await startModelHarness();
  const file = join(h.home.dir, "observer.mjs");
  writeFileSync(file, plugin);
  writeFileSync(join(h.home.root, "ze-harness.config.json"), JSON.stringify({ plugins: [file], ...config }));
  await h.harness.close();
  const { startHarness } = await import("../support/harness.js");
  second = await startHarness({}, h.home);
  return second;
}

/** Resolves once `list` holds an event of `type`. */
async function until(list: () => readonly Seen[] | undefined, type: string): Promise<void> {
  while (!list()?.some((event) => event.type === type)) await new Promise((resolve) => setImmediate(resolve));
}

describe("event subscribers", () => {
  it("receive the Turn's events in order, each its own copy, a throwing one ignored", async () => {
    shared.zeSeen = { first: [], second: [] };
    delete shared.zeGate;
    const host = await start({});
    const api = { api: host.api, fetch: host.fetch };
    const sessionId = crypto.randomUUID();
    const { sdk } = await import("../../clients/index.js");
    await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: {} });
    h!.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "." } }] }, { events: [{ type: "text", text: "all " }, { type: "text", text: "read" }] });
    const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "look")).turnId);
    expect(turn.phase).toBe("completed");
    await until(() => shared.zeSeen?.second, "turn.terminal");
    const types = shared.zeSeen!.second.map((event) => event.type);
    expect(types[0]).toBe("turn.started");
    expect(types.at(-1)).toBe("turn.terminal");
    const order = ["turn.started", "tool.requested", "tool.completed", "model.text.delta", "turn.terminal"].map((type) => types.indexOf(type));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(types).toContain("model.usage");
    const started = shared.zeSeen!.second[0]!;
    expect(started).toMatchObject({ turnId: turn.id, model: { providerId: "test", modelId: "scripted" } });
    const requested = shared.zeSeen!.second.find((event) => event.type === "tool.requested")!;
    expect(requested).toMatchObject({ turnId: turn.id, toolId: "read", toolCallId: expect.any(String) });
    const text = shared.zeSeen!.second.filter((event) => event.type === "model.text.delta").map((event) => event.delta).join("");
    expect(text).toBe("all read");
    expect(shared.zeSeen!.second.at(-1)).toMatchObject({ type: "turn.terminal", outcome: { kind: "completed", text: "all read" } });
    // The first subscriber changed its copy; the third saw the original.
    expect(shared.zeSeen!.first.every((event) => event.type === "changed-by-the-first")).toBe(true);
    expect(shared.zeSeen!.first).toHaveLength(types.length);
  });

  it("hold observerBufferSize events per Turn and drop the oldest while a subscriber falls behind", async () => {
    shared.zeSeen = { first: [], second: [] };
    let open!: () => void;
    shared.zeGate = new Promise<void>((resolve) => (open = resolve));
    const host = await start({ observerBufferSize: 2 });
    const api = { api: host.api, fetch: host.fetch };
    const sessionId = crypto.randomUUID();
    const { sdk } = await import("../../clients/index.js");
    await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: {} });
    h!.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "." } }] }, { events: [{ type: "text", text: "a" }, { type: "text", text: "b" }, { type: "text", text: "c" }] });
    // The Turn completes while the first subscriber is still stuck on its second event.
    const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "look")).turnId);
    expect(turn.phase).toBe("completed");
    // Only turn.started reached the first subscriber (which renames what it was given).
    expect(shared.zeSeen.first).toHaveLength(1);
    expect(shared.zeSeen.second.map((event) => event.type)).toEqual(["turn.started"]);
    open();
    await until(() => shared.zeSeen?.second, "turn.terminal");
    const types = shared.zeSeen.second.map((event) => event.type);
    // turn.started went through at once; the next event was held by the stalled subscriber; of the
    // ten or so that followed, only the newest two stayed queued.
    expect(types).toHaveLength(4);
    expect(types[0]).toBe("turn.started");
    expect(types.slice(2)).toEqual(["model.usage", "turn.terminal"]);
    delete shared.zeGate;
  });
});

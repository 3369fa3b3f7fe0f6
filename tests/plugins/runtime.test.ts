// The host runtime: generations swap on reload only when the new one activates, a leased
// generation stays with its Turn until released, and a replaced generation's cleanups run once it
// is no longer leased.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configCandidates, inlineCandidate, pluginEntriesFromLayers, PluginRuntime, unavailableCapabilities, type PluginCandidate, type RuntimeSource } from "../../services/plugins/index.js";
import { doublingPlugin, pluginDir, type PluginDir } from "./helpers.js";

let dir: PluginDir;
beforeEach(() => {
  dir = pluginDir();
});
afterEach(() => dir.cleanup());

/** A plugin whose cleanup records its name and resolves `closed`. */
function tracked(id: string, log: string[]) {
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const plugin = {
    id,
    setup: () => () => {
      log.push(`closed ${id}`);
      closed();
    },
  };
  return { candidate: inlineCandidate(plugin), closed: done };
}

async function start(source: () => RuntimeSource) {
  const started = await PluginRuntime.start({ source, capabilities: unavailableCapabilities() });
  if (!started.ok) throw new Error(started.message);
  return started.runtime;
}

describe("PluginRuntime", () => {
  it("swaps generations on reload and keeps a leased one until it is released", async () => {
    const log: string[] = [];
    const first = tracked("plugin.one", log);
    const second = tracked("plugin.two", log);
    let candidates: PluginCandidate[] = [first.candidate];
    const runtime = await start(() => ({ ok: true, candidates }));
    expect(runtime.current.id).toBe("host-1");
    expect(runtime.plugins()).toEqual([{ source: "inline:plugin.one", generationId: "host-1", pluginId: "plugin.one", status: "active", registrations: [] }]);

    const turn = runtime.lease();
    candidates = [second.candidate];
    const reloaded = await runtime.reload();
    expect(reloaded).toEqual({ result: "reloaded", plugins: [{ source: "inline:plugin.two", generationId: "host-2", pluginId: "plugin.two", status: "active", registrations: [] }] });
    expect(runtime.current.id).toBe("host-2");
    // The running Turn still holds host-1, and host-1 stays open while it does.
    expect(turn.generation.id).toBe("host-1");
    expect(runtime.leaseCount(turn.generation)).toBe(1);
    expect(log).toEqual([]);
    expect(runtime.lease().generation.id).toBe("host-2");

    turn.release();
    turn.release(); // idempotent
    await first.closed;
    expect(log).toEqual(["closed plugin.one"]);
    expect(runtime.leaseCount(turn.generation)).toBe(0);
  });

  it("a rejected reload leaves the prior generation active and reports why", async () => {
    const log: string[] = [];
    const good = tracked("plugin.good", log);
    let source: RuntimeSource = { ok: true, candidates: [good.candidate] };
    const runtime = await start(() => source);
    const before = runtime.current;

    source = { ok: true, candidates: [inlineCandidate({ id: "plugin.bad", setup: (c: { hooks: { register(n: string, f: unknown): void } }) => c.hooks.register("nope", async () => undefined) })] };
    const rejected = await runtime.reload();
    expect(rejected.result).toBe("rejected");
    expect(rejected.plugins).toEqual([
      ...before.plugins,
      { source: "inline:plugin.bad", generationId: "host-2", pluginId: "plugin.bad", status: "failed", registrations: [], error: expect.stringContaining('Unknown hook "nope"') },
    ]);
    expect(runtime.current).toBe(before);
    expect(runtime.plugins()).toEqual(before.plugins);
    expect(runtime.lastRejection?.message).toContain("Unknown hook");

    source = { ok: false, message: "config.json: /plugins: broken" };
    expect(await runtime.reload()).toEqual({ result: "rejected", plugins: before.plugins });
    expect(runtime.lastRejection?.message).toBe("config.json: /plugins: broken");
    expect(log).toEqual([]);

    await runtime.close();
    await good.closed;
    expect(log).toEqual(["closed plugin.good"]);
  });

  it("reloads one at a time and picks up a changed plugin file", async () => {
    const file = dir.write("plugin.mjs", doublingPlugin("plugin.file", "first_version"));
    const runtime = await start(() => ({ ok: true, candidates: configCandidates(pluginEntriesFromLayers([{ file: `${dir.dir}/c.json`, config: { plugins: ["./plugin.mjs"] } }]), dir.dir) }));
    expect(runtime.current.tools.map((tool) => tool.id)).toEqual(["first_version"]);
    dir.write("plugin.mjs", doublingPlugin("plugin.file", "second_version"));
    const [a, b] = await Promise.all([runtime.reload(), runtime.reload()]);
    expect([a.result, b.result]).toEqual(["reloaded", "reloaded"]);
    expect(a.plugins[0]!.generationId).toBe("host-2");
    expect(b.plugins[0]!.generationId).toBe("host-3");
    expect(runtime.current.tools.map((tool) => tool.id)).toEqual(["second_version"]);
    expect(file).toContain("plugin.mjs");
    await runtime.close();
    expect(() => runtime.lease()).toThrow("closed");
  });

  it("refuses to start when the first generation does not activate", async () => {
    const started = await PluginRuntime.start({
      source: () => ({ ok: true, candidates: [inlineCandidate({ id: "Bad Id", setup: () => undefined })] }),
      capabilities: unavailableCapabilities(),
    });
    expect(started.ok).toBe(false);
    if (!started.ok) expect(started.plugins[0]).toMatchObject({ status: "failed", error: expect.stringContaining("Invalid plugin id") });
  });
});

// The typed client's workspace watchers against the in-process handler, through a fetch that
// cuts the first connection short: `readWorkspaceFile` starts the read over pinned to the version
// it had begun (and reports `changed` when the file moved on meanwhile), `watchWorkspaceFiles`
// reconnects with a new watch whose `files.ready` comes again.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createZeClient, readWorkspaceFile, sdk, watchWorkspaceFiles, type FilesStreamEvent, type WorkspaceFilesLifecycle, type ZeClient } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startHarness, type TestHarness } from "../support/harness.js";
import { b64 } from "./repos.js";

const server = "local";
let t: TestHarness;
let sessionId: string;
let workdir: string;

beforeEach(async () => {
  t = await startHarness();
  workdir = join(t.home.root, "w");
  mkdirSync(workdir);
  sessionId = randomUUID();
  await ok(sdk.createSession({ client: t.api.client, path: { server, sessionId }, body: { workdir: "w" } }));
});
afterEach(async () => {
  await t.close();
});

/** A client whose first request to `route` gets only the first `keep` SSE messages, then the body ends. */
function cutting(route: string, keep: number, onCut?: () => void): { client: ZeClient; requests: URL[] } {
  const requests: URL[] = [];
  let cut = false;
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.pathname.endsWith(route)) requests.push(url);
    const response = await t.fetch(request);
    if (cut || !url.pathname.endsWith(route) || !response.ok) return response;
    cut = true;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (text.split("\n\n").length <= keep) {
      const next = await reader.read();
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    void reader.cancel();
    const kept = text.split("\n\n").slice(0, keep).join("\n\n") + "\n\n";
    onCut?.();
    return new Response(kept, { status: 200, headers: response.headers });
  };
  return { client: createZeClient({ baseUrl: "http://localhost", fetch }), requests };
}

describe("readWorkspaceFile", () => {
  it("starts a cut read over pinned to its version and delivers the whole file", async () => {
    const text = "x".repeat(100_000);
    writeFileSync(join(workdir, "big.txt"), text);
    const { client, requests } = cutting("/files/content", 2);
    const read = await readWorkspaceFile(client, { server, sessionId, path: { bytesBase64: b64("big.txt") }, retryDelayMs: 1 });
    expect(read.kind === "text" && Buffer.from(read.bytes).toString("utf8")).toBe(text);
    expect(requests).toHaveLength(2);
    expect(requests[0]!.searchParams.get("expectedVersion")).toBeNull();
    expect(requests[1]!.searchParams.get("expectedVersion")).toBe(read.kind === "text" ? read.version : "");
  });

  it("reports changed when the file moved on while the read was cut", async () => {
    writeFileSync(join(workdir, "a.txt"), "one ".repeat(20_000));
    const { client } = cutting("/files/content", 2, () => writeFileSync(join(workdir, "a.txt"), "two"));
    expect(await readWorkspaceFile(client, { server, sessionId, path: { bytesBase64: b64("a.txt") }, retryDelayMs: 1 })).toMatchObject({ kind: "changed" });
  });
});

describe("watchWorkspaceFiles", () => {
  it("reconnects with a new watch and is ready again", async () => {
    const { client, requests } = cutting("/files/events", 1);
    const events: FilesStreamEvent[] = [];
    const lifecycle: WorkspaceFilesLifecycle[] = [];
    const controller = new AbortController();
    let readyCount = 0;
    let secondReady!: () => void;
    const ready = new Promise<void>((resolve) => (secondReady = resolve));
    let changed!: () => void;
    const change = new Promise<void>((resolve) => (changed = resolve));
    const done = watchWorkspaceFiles(client, {
      server,
      sessionId,
      signal: controller.signal,
      retryDelayMs: 1,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "files.ready" && ++readyCount === 2) secondReady();
        if (event.type === "files.changed") changed();
      },
      onLifecycle: (event) => lifecycle.push(event),
    });
    await ready;
    expect(requests).toHaveLength(2);
    expect(lifecycle.map((event) => event.type)).toEqual(["files.reconnecting", "files.resumed"]);
    writeFileSync(join(workdir, "new.txt"), "x");
    await change;
    controller.abort();
    expect(await done).toBeUndefined();
    expect(events.slice(0, 2).map((event) => event.type)).toEqual(["files.ready", "files.ready"]);
  });
});

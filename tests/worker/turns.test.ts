// Turns in the Worker host, in workerd through miniflare: the bundled Worker serves the Turn
// routes from each server's HarnessServerObject, with the scripted model (tools/test-model)
// reached over fetch through a HARNESS_PROVIDERS definition with a loopback baseURL. The built
// CLI's `run` streams an answer with --remote; a permission ask is answered over the API (and
// `shell` answers its typed unavailable outcome); the /workspace file tools, AGENTS.md and a
// CodeMode script work over the object's store; two servers keep their Turns apart; a running
// Turn is cancelled inside the object; a bad
// Worker variable is answered as a typed error; and a Turn open when workerd stops is settled
// after a restart on the persisted state by the object's alarm alone, the Turn queued behind it
// run exactly once.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { networkClient, tempHome, type TempHome } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let script: string;
let persist: string;
let home: TempHome;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];

const bindings = (extra: Record<string, string> = {}): Record<string, string> => ({
  HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
  // The recovery alarm's interval, short so a restart is recovered within the test's time.
  HARNESS_RECOVERY_INTERVAL_MS: "300",
  // The Server permission scope: every shell command asks.
  HARNESS_PERMISSIONS: JSON.stringify([{ action: "shell", resource: "*", effect: "ask" }]),
  ...extra,
});

async function start(extra: Record<string, string> = {}, directory = persist): Promise<{ mf: Miniflare; url: string }> {
  const instance = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    durableObjectsPersist: directory,
    bindings: bindings(extra),
    host: "127.0.0.1",
    port: 0,
  });
  return { mf: instance, url: (await instance.ready).origin };
}

beforeAll(async () => {
  model = await startTestModel();
  script = await bundle("worker/index.ts");
  persist = mkdtempSync(join(tmpdir(), "zh-worker-turns-"));
  home = tempHome("zh-worker-turns-cli-");
  ({ mf, url } = await start());
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  if (persist) rmSync(persist, { recursive: true, force: true });
  home?.cleanup();
});

async function createSession(server: string, api = client): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: api, path: { server, sessionId }, body: {} }));
  return sessionId;
}

async function queue(server: string, sessionId: string, text: string, api = client): Promise<string> {
  const turnId = randomUUID();
  await ok(
    sdk.submitPrompt({
      client: api,
      path: { server, sessionId },
      headers: { "x-ze-harness-client-id": "worker-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never,
    }),
  );
  return turnId;
}

/** The Turn stream from revision 0 until `stop` holds for an event (or the stream ends); every event checked against the contract. */
async function watch(base: string, server: string, sessionId: string, turnId: string, stop: (event: TurnStreamEvent) => boolean): Promise<TurnStreamEvent[]> {
  const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
  const response = await fetch(`${base}${path}?afterRevision=0`);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  return readSse<TurnStreamEvent>(response, path, stop);
}

const finished = (event: TurnStreamEvent): boolean => event.type === "turn.finished";

async function getTurn(server: string, sessionId: string, turnId: string, api = client): Promise<Turn> {
  return (await ok(sdk.getTurn({ client: api, path: { server, sessionId, turnId } }))).turn;
}

describe("Turns in the Worker host (workerd)", () => {
  it("runs a prompt to its answer: the CLI's run with --remote streams it", async () => {
    assertBuilt();
    model.enqueue({ events: [{ type: "text", text: "Hello from the Durable Object." }] });
    const before = model.requests.length;
    const ran = await runCli(["--remote", url, "run", "hello"], { env: home.env, cwd: home.root });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("Hello from the Durable Object.");
    expect(model.requests.length).toBe(before + 1);
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("hello");
  });

  it("asks a permission, answered over the API; shell then answers its typed unavailable outcome", async () => {
    model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "ls /workspace" } }] }, { events: [{ type: "text", text: "No shell here." }] });
    const sessionId = await createSession("alpha");
    const turnId = await queue("alpha", sessionId, "List the files");
    const asked = (await watch(url, "alpha", sessionId, turnId, (event) => event.type === "turn.approval.requested" || finished(event))).at(-1)!;
    expect(asked).toMatchObject({ type: "turn.approval.requested", request: { action: "shell", toolId: "shell" } });
    const requestId = (asked as Extract<TurnStreamEvent, { type: "turn.approval.requested" }>).request.id;
    await ok(sdk.replyPermission({ client, path: { server: "alpha", sessionId, permissionRequestId: requestId }, body: { reply: "once" } }));
    const events = await watch(url, "alpha", sessionId, turnId, finished);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "No shell here." } });
    const turn = await getTurn("alpha", sessionId, turnId);
    // HARNESS_PERMISSIONS is the Server scope of the Turn's policy.
    expect(turn.policy.permissions).toEqual([{ action: "shell", resource: "*", effect: "ask" }]);
    const tool = turn.parts.find((part) => part.type === "tool") as { state?: unknown } | undefined;
    expect(JSON.stringify(tool)).toContain("spawn_failed");
    // The model saw the typed outcome in its second request.
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("no container binding");
    // Listed through the Session's Turn list.
    const listed = await ok(sdk.listSessionTurns({ client, path: { server: "alpha", sessionId }, query: {} }));
    expect(listed.turns.map((item) => item.turn.id)).toContain(turnId);
  });

  it("writes and reads /workspace through the file tools, applies AGENTS.md at admission, and runs a CodeMode script", async () => {
    const sessionId = await createSession("files");
    // A Turn writes AGENTS.md through `write` (inside the workdir: allowed by default).
    model.enqueue(
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: "AGENTS.md", content: "Answer like a lighthouse keeper." } }] },
      { events: [{ type: "text", text: "Written." }] },
    );
    let turnId = await queue("files", sessionId, "Write the instructions");
    expect((await watch(url, "files", sessionId, turnId, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Written." } });
    // The next Turn's admission reads it from the store; its CodeMode script writes through the same tools.
    const script = 'await tools.write({ filePath: "notes/todo.md", content: "- ship the Worker" }); return 6 * 7;';
    model.enqueue({ events: [{ type: "tool_call", name: "execute", arguments: { code: script } }] }, { events: [{ type: "text", text: "Scripted." }] });
    turnId = await queue("files", sessionId, "Run the script");
    expect((await watch(url, "files", sessionId, turnId, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Scripted." } });
    const scripted = JSON.stringify(model.requests.at(-1)!.body);
    expect(scripted).toContain("Answer like a lighthouse keeper.");
    expect(scripted).toContain("42");
    // A third Turn reads what the script wrote; a path out of /workspace is refused, nothing read.
    model.enqueue(
      { events: [{ type: "tool_call", name: "read", arguments: { filePath: "notes/todo.md" } }, { type: "tool_call", name: "read", arguments: { filePath: "../../etc/passwd" } }] },
      { events: [{ type: "text", text: "Read." }] },
    );
    turnId = await queue("files", sessionId, "Read the notes");
    expect((await watch(url, "files", sessionId, turnId, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Read." } });
    const read = JSON.stringify(model.requests.at(-1)!.body);
    expect(read).toContain("- ship the Worker");
    expect(read).not.toContain("root:x:0:0");
  });

  it("keeps two servers' Turns apart, each in its own object", async () => {
    model.enqueue({ events: [{ type: "text", text: "Beta answers." }] });
    const sessionId = await createSession("beta");
    const turnId = await queue("beta", sessionId, "Hello beta");
    expect((await watch(url, "beta", sessionId, turnId, finished)).at(-1)).toMatchObject({ outcome: { kind: "completed", text: "Beta answers." } });
    // The same ids mean nothing to another server's object.
    expect((await failure(sdk.getTurn({ client, path: { server: "gamma", sessionId, turnId } }))).status).toBe(404);
    expect((await failure(sdk.submitPrompt({ client, path: { server: "gamma", sessionId }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "x" }] } as never }))).status).toBe(404);
    expect((await ok(sdk.listSessions({ client, path: { server: "gamma" } }))).sessions).toEqual([]);
  });

  it("cancels a running Turn inside the object: the model request is aborted and the Turn settles cancelled", async () => {
    model.enqueue({ hang: true });
    const before = model.requests.length;
    const sessionId = await createSession("zeta");
    const turnId = await queue("zeta", sessionId, "Hang until cancelled");
    await model.waitForRequest(before + 1);
    const cancelled = await ok(sdk.cancelTurn({ client, path: { server: "zeta", sessionId, turnId }, body: { reason: "enough" } }));
    expect(cancelled.turn.id).toBe(turnId);
    const events = await watch(url, "zeta", sessionId, turnId, finished);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "cancelled" } });
    expect(model.requests.length).toBe(before + 1);
  });

  it("answers a bad Worker variable as a typed error at every request, never echoing its value", async () => {
    const directory = mkdtempSync(join(tmpdir(), "zh-worker-config-"));
    try {
      const bad = await start({ HARNESS_PROVIDERS: "{}" }, directory);
      try {
        const api = networkClient(bad.url).client;
        for (let attempt = 0; attempt < 2; attempt++) {
          const refused = await failure(sdk.listSessions({ client: api, path: { server: "delta" } }));
          expect(refused.status).toBe(503);
          expect(refused.body).toMatchObject({ _tag: "UnavailableError" });
          expect(refused.body.message).toContain("ProvidersEmpty");
          expect(refused.body.message).toContain("HARNESS_PROVIDERS");
        }
        const timeout = await start({ HARNESS_APPROVAL_TIMEOUT_MS: "soon" }, mkdtempSync(join(tmpdir(), "zh-worker-config-")));
        try {
          const answered = await failure(sdk.listSessions({ client: networkClient(timeout.url).client, path: { server: "delta" } }));
          expect(answered.body.message).toContain("HARNESS_APPROVAL_TIMEOUT_MS");
          expect(answered.body.message).not.toContain("soon");
        } finally {
          await timeout.mf.dispose();
        }
      } finally {
        await bad.mf.dispose();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 30_000);

  it("recovers by its alarm after a restart mid-Turn: the lost Turn fails process_lost, the queued one runs once", async () => {
    model.enqueue({ hang: true }, { events: [{ type: "text", text: "The queued Turn ran." }] });
    const first = model.requests.length;
    const sessionId = await createSession("epsilon");
    const lost = await queue("epsilon", sessionId, "This one hangs");
    const queued = await queue("epsilon", sessionId, "This one waits");
    await model.waitForRequest(first + 1);
    expect((await getTurn("epsilon", sessionId, lost)).phase).toBe("running");
    expect((await getTurn("epsilon", sessionId, queued)).phase).toBe("pending");

    // workerd stops with the Turn open; a new one starts on the same persisted state. The
    // object is woken only by the server activity stream, which is observational (it admits
    // nothing and runs no recovery): the persisted alarm it finds recovers and runs the queue.
    // (Local workerd re-reads an object's alarm when the object wakes; the platform's alarm
    // scheduler would wake it by itself.)
    await mf.dispose();
    ({ mf, url } = await start());
    client = networkClient(url).client;
    const wake = new AbortController();
    const stream = await fetch(`${url}/v1/servers/epsilon/events`, { signal: wake.signal });
    expect(stream.status).toBe(200);
    const ran = await model.waitForRequest(first + 2);
    wake.abort();
    await stream.body?.cancel().catch(() => {});
    expect(JSON.stringify(ran.body)).toContain("This one waits");

    const lostEvents = await watch(url, "epsilon", sessionId, lost, finished);
    expect(lostEvents.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "failed", fault: { code: "process_lost" } } });
    const queuedEvents = await watch(url, "epsilon", sessionId, queued, finished);
    expect(queuedEvents.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "The queued Turn ran." } });
    // Never run twice: one request for the lost Turn, one for the queued one.
    expect(model.requests.length).toBe(first + 2);
  }, 40_000);
});

// WorkerHarnessHost's embedder ports in workerd (tests/worker/fixtures/embed-ports-object.ts, one
// workerd start), with the scripted model at a loopback baseURL as provider `test`:
// - contentResolver: the references a Turn can see are resolved in its model request (an entry
//   its visibility excludes is never asked); stored rows keep the reference; a refusal fails the
//   Turn with `content_reference_unresolved` naming the reference, never the resolver's message;
// - toolDispatch and the Workspace's Computer: each approved call reaches the host's custody —
//   a refused `write` writes nothing, a `read` the host answers never reads the store, `shell`
//   proceeds and runs on the Computer (its output and exit status reach the model);
// - providerDefinitions: a Turn on `relay/fast` is answered by the embedder's provider in the isolate.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, watchTurn, type Turn, type ZeClient } from "../../clients/index.js";
import type { TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { startEmbedFixture, type EmbedFixture } from "./support.js";

const SERVER = "ports";
/** The fixture's RESOLVER_SECRET (not imported: the fixture's module graph is the Worker's). */
const RESOLVER_SECRET = "resolver-secret-7c1d";

let fixture: EmbedFixture;
let model: TestModel;
let url: string;
let api: ZeClient;

beforeAll(async () => {
  fixture = await startEmbedFixture("tests/worker/fixtures/embed-ports-object.ts", { className: "PortsObject", binding: "PORTS", providersBinding: "PORTS_PROVIDERS" });
  ({ model, url, api } = fixture);
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

interface Seen {
  readonly asked: { reference: string; sessionId: string; turnId?: string }[];
  readonly leases: { toolId: string; toolCallId: string; sessionId: string; turnId: string; server: string; input: unknown; permissions: unknown[]; fromScript: boolean }[];
  readonly execs: { command: string; cwd: string; timeoutMs: number }[];
}

const seen = async (): Promise<Seen> => (await (await fetch(`${url}/fixture/seen`)).json()) as Seen;

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

async function runTurn(sessionId: string, body: Record<string, unknown>): Promise<Turn> {
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client: api.client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "ports-test" }, body: { delivery: "queue", turnId, ...body } as never }));
  return watchTurn(api, { server: SERVER, sessionId, turnId });
}

const userTexts = (body: { messages: { role: string; content: unknown }[] }): string[] =>
  body.messages.filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));

describe("WorkerHarnessHost embedder ports (workerd)", () => {
  it("contentResolver: resolves what the Turn can see, keeps the reference stored, fails typed without the resolver's message", async () => {
    const sessionId = await createSession();
    const append = (entryId: string, reference: string) =>
      ok(sdk.appendConversation({ client: api.client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "ports-test" }, body: { entryId, content: [{ type: "content-reference", reference }] } }));
    await append(randomUUID(), "att://visible");
    const hidden = randomUUID();
    await append(hidden, "att://hidden");
    model.enqueue({ events: [{ type: "text", text: "seen" }] });
    const before = model.requests.length;
    const turn = await runTurn(sessionId, { prompt: [{ type: "text", text: "Look at " }, { type: "content-reference", reference: "att://prompt" }], visibility: { excludedEntryIds: [hidden] } });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "seen" });
    expect(userTexts(model.requests[before]!.body)).toEqual(["RESOLVED(att://visible)", "Look at RESOLVED(att://prompt)"]);
    expect(JSON.stringify(model.requests[before]!.body)).not.toContain("att://hidden");
    const asked = (await seen()).asked;
    expect(asked.map((request) => request.reference).sort()).toEqual(["att://prompt", "att://visible"]);
    expect(asked.every((request) => request.sessionId === sessionId && request.turnId === turn.id)).toBe(true);
    // Stored: the reference, never what it resolved to.
    const stored = JSON.stringify((await ok(sdk.getTurn({ client: api.client, path: { server: SERVER, sessionId, turnId: turn.id } }))).turn);
    expect(stored).toContain("att://prompt");
    expect(stored).not.toContain("RESOLVED(");

    const count = model.requests.length;
    const failed = await runTurn(sessionId, { prompt: [{ type: "content-reference", reference: "att://denied" }] });
    expect(failed.outcome).toMatchObject({ kind: "failed", fault: { code: "content_reference_unresolved", message: 'The content reference "att://denied" could not be resolved (forbidden)' } });
    expect(JSON.stringify(failed)).not.toContain(RESOLVER_SECRET);
    expect(model.requests.length).toBe(count);
  });

  it("toolDispatch and the Workspace's Computer: refused, host-answered and proceeded calls; shell runs on the Computer", async () => {
    const sessionId = await createSession();
    model.enqueue(
      {
        events: [
          { type: "tool_call", id: "w1", name: "write", arguments: { filePath: "held.txt", content: "never written" } },
          { type: "tool_call", id: "r1", name: "read", arguments: { filePath: "remote.txt" } },
          { type: "tool_call", id: "s1", name: "shell", arguments: { command: "make test", timeoutMs: 5000 } },
        ],
      },
      { events: [{ type: "tool_call", id: "r2", name: "read", arguments: { filePath: "held.txt" } }] },
      { events: [{ type: "text", text: "done" }] },
    );
    const before = model.requests.length;
    const turn = await runTurn(sessionId, { prompt: [{ type: "text", text: "use the tools" }] });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "done" });
    const parts = Object.fromEntries(
      turn.parts.filter((part) => part.type === "tool").map((part) => [(part as { toolCallId: string }).toolCallId, part as { state: string; fault?: { code: string; message: string }; canonicalResult?: { value: unknown } }]),
    );
    expect(parts["w1"]).toMatchObject({ state: "failed", fault: { code: "tool_dispatch_refused", message: expect.stringContaining("writes are held by the host") } });
    expect(parts["r1"]).toMatchObject({ state: "completed", canonicalResult: { value: "from the host's own store" } });
    expect(parts["s1"]).toMatchObject({ state: "completed", canonicalResult: { value: "ran make test\na warning\n(exit code 3)" } });
    // The refused write wrote nothing: the proceeded read finds no file.
    expect(parts["r2"]).toMatchObject({ state: "failed", fault: { code: "not_found" } });
    const { leases, execs } = await seen();
    expect(leases.map((lease) => [lease.toolId, lease.toolCallId, lease.server, lease.sessionId, lease.turnId, lease.fromScript])).toEqual([
      ["write", "w1", SERVER, sessionId, turn.id, false],
      ["read", "r1", SERVER, sessionId, turn.id, false],
      ["shell", "s1", SERVER, sessionId, turn.id, false],
      ["read", "r2", SERVER, sessionId, turn.id, false],
    ]);
    expect(leases[2]!.permissions).toEqual([expect.objectContaining({ action: "shell", resources: ["make test"] })]);
    expect(execs).toEqual([{ command: "make test", cwd: "/workspace", timeoutMs: 5000 }]);
    const next = JSON.stringify(model.requests[before + 1]!.body.messages);
    for (const text of ["writes are held by the host", "from the host's own store", "(exit code 3)"]) expect(next).toContain(text);
  });

  it("providerDefinitions: the embedder's provider is compiled into the plan and answers a Turn in the isolate", async () => {
    const resources = (await (await fetch(`${url}/fixture/resources`)).json()) as { providerIds: string[]; rejectedProviders: unknown[] };
    expect(resources.providerIds).toEqual(["relay", "test"]);
    expect(resources.rejectedProviders).toEqual([]);
    const sessionId = await createSession();
    const count = model.requests.length;
    const turn = await runTurn(sessionId, { prompt: [{ type: "text", text: "ping" }], model: "relay/fast" });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "relayed: ping" });
    expect(turn.model).toBe("relay/fast");
    // The scripted model was not asked: the provider answered in the isolate.
    expect(model.requests.length).toBe(count);
  });
});

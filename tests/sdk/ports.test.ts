// The embedder ports of the Node embedded SDK (services/core/turns/content.ts and dispatch.ts),
// with the scripted test model: `contentResolver` resolves content references only for what the
// Turn's history lets through (an excluded entry's reference is never asked), stored rows keep the
// reference, a failure is the Turn's `content_reference_unresolved` naming the reference but never
// the resolver's message; `toolDispatch` sees each approved call after its permission resolution
// and wraps it, refuses it (nothing runs) or answers it itself; a denied call never reaches it.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createEmbeddedHarness,
  DurableContentResolutionError,
  EmbeddedHarnessError,
  ToolDispatchError,
  sdk,
  textPrompt,
  unwrap,
  type DurableContentResolutionRequest,
  type EmbeddedHarness,
  type ToolDispatchLease,
} from "../../sdk/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig } from "../support/model.js";

const SECRET = "resolver-secret-token-7f3a";

let model: TestModel;
let home: TempHome | undefined;
let harness: EmbeddedHarness | undefined;

beforeAll(async () => {
  model = await startTestModel();
});
afterAll(async () => {
  await model.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  home?.cleanup();
  home = undefined;
  model.discard();
});

const start = async (options: Partial<Parameters<typeof createEmbeddedHarness>[0]>, config: Record<string, unknown> = {}): Promise<EmbeddedHarness> => {
  home = tempHome("ze-ports-");
  harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: "ports.db", env: home.env, config: { model: TEST_MODEL, providers: testProviderConfig(model), ...config }, ...options });
  return harness;
};

/** The user messages' text of a recorded chat request, in order. */
const userTexts = (body: { messages: { role: string; content: unknown }[] }): string[] =>
  body.messages
    .filter((message) => message.role === "user")
    .map((message) => (typeof message.content === "string" ? message.content : (message.content as { type: string; text?: string }[]).map((part) => part.text ?? `<${part.type}>`).join("")));

describe("contentResolver", () => {
  it("resolves only visible references at request time; stored rows keep the reference", async () => {
    const asked: DurableContentResolutionRequest[] = [];
    const client = await start({
      contentResolver: {
        async resolve(request) {
          asked.push(request);
          if (request.reference === "att://denied") throw new DurableContentResolutionError(request.reference, "forbidden", `denied with ${SECRET}`);
          if (request.reference === "att://broken") throw new Error(`backend said ${SECRET}`);
          return [{ type: "text", text: `RESOLVED(${request.reference})` }];
        },
      },
    });
    const session = await client.createSession();
    await client.appendConversation(session.id, { content: [{ type: "text", text: "see " }, { type: "content-reference", reference: "att://visible" }] });
    const hidden = crypto.randomUUID();
    await client.appendConversation(session.id, { entryId: hidden, content: [{ type: "content-reference", reference: "att://hidden" }] });
    model.enqueue({ events: [{ type: "text", text: "done" }] });
    const turnId = crypto.randomUUID();
    const before = model.requests.length;
    await client.submitPrompt(session.id, {
      delivery: "queue",
      turnId,
      prompt: [...textPrompt("Look at "), { type: "content-reference", reference: "att://prompt" }],
      visibility: { excludedEntryIds: [hidden] },
    });
    const turn = await client.watchTurn(session.id, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    // The excluded entry's reference was never asked; the others were, with the Turn's identity.
    expect(asked.map((request) => request.reference).sort()).toEqual(["att://prompt", "att://visible"]);
    expect(asked.every((request) => request.sessionId === session.id && request.turnId === turnId)).toBe(true);
    const texts = userTexts(model.requests[before]!.body);
    expect(texts).toEqual(["see RESOLVED(att://visible)", "Look at RESOLVED(att://prompt)"]);
    expect(JSON.stringify(model.requests[before]!.body)).not.toContain("att://hidden");
    // Stored: the Turn's request and the conversation keep the reference, never the resolved text.
    const stored = await client.getTurn(session.id, turnId);
    expect(JSON.stringify(stored)).toContain('"content-reference"');
    expect(JSON.stringify(stored)).not.toContain("RESOLVED(");
    const history = JSON.stringify(await unwrap(sdk.history_({ client: client.api.client, path: { server: "local", sessionId: session.id } })));
    expect(history).toContain("att://visible");
    expect(history).not.toContain("RESOLVED(");

    // A typed refusal and an untyped throw: the Turn fails naming the reference, never the resolver's message.
    // (A failed Turn's prompt stays in the history: a later Turn that can see it fails on it too, so the second excludes the first.)
    const failedTurns: string[] = [];
    for (const reference of ["att://denied", "att://broken"]) {
      const failing = crypto.randomUUID();
      const count = model.requests.length;
      await client.submitPrompt(session.id, { delivery: "queue", turnId: failing, prompt: [{ type: "content-reference", reference }], visibility: { excludedTurnIds: [...failedTurns] } });
      failedTurns.push(failing);
      const failed = await client.watchTurn(session.id, failing);
      expect(failed.outcome).toMatchObject({ kind: "failed", fault: { code: "content_reference_unresolved", message: expect.stringContaining(JSON.stringify(reference)) } });
      expect((failed.outcome as { fault: { message: string } }).fault.message).toContain(reference === "att://denied" ? "(forbidden)" : "(unavailable)");
      expect(JSON.stringify(failed)).not.toContain(SECRET);
      expect(model.requests.length).toBe(count);
    }
  });

  it("without a resolver the model sees the reference named, as before; a malformed port fails startup", async () => {
    const client = await start({});
    const session = await client.createSession();
    model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const turnId = crypto.randomUUID();
    const before = model.requests.length;
    await client.submitPrompt(session.id, { delivery: "queue", turnId, prompt: [{ type: "content-reference", reference: "att://plain" }] });
    expect((await client.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed" });
    expect(model.requests[before]!.body.messages.at(-1)).toEqual({ role: "user", content: "[content reference: att://plain]" });
    await client.close();
    harness = undefined;
    await expect(start({ contentResolver: {} as never })).rejects.toBeInstanceOf(EmbeddedHarnessError);
    await expect(start({ toolDispatch: { dispatch: 1 } as never })).rejects.toMatchObject({ _tag: "ValidationError" });
  });
});

describe("toolDispatch", () => {
  it("wraps, refuses and answers approved calls; a denied call never reaches it", async () => {
    const leases: ToolDispatchLease[] = [];
    const client = await start(
      {
        toolDispatch: {
          async dispatch(lease) {
            leases.push(lease);
            const input = lease.input as { filePath?: string };
            if (lease.toolId === "write") return { kind: "refused", code: "policy", message: "writes are held by the host" };
            if (input.filePath === "remote.txt") return { kind: "result", result: { format: "text", value: "from the host's own store" } };
            if (input.filePath === "boom.txt") throw new ToolDispatchError("backend_down", "the host backend is down");
            return await lease.proceed();
          },
        },
      },
      { permissions: [{ action: "read", resource: "*secret.txt", effect: "deny" }] },
    );
    writeFileSync(join(home!.root, "note.txt"), "the note says 42\n");
    const session = await client.createSession();
    model.enqueue(
      {
        events: [
          { type: "tool_call", id: "c1", name: "read", arguments: { filePath: "note.txt" } },
          { type: "tool_call", id: "c2", name: "write", arguments: { filePath: "held.txt", content: "x" } },
          { type: "tool_call", id: "c3", name: "read", arguments: { filePath: "remote.txt" } },
          { type: "tool_call", id: "c4", name: "read", arguments: { filePath: "boom.txt" } },
        ],
      },
      { events: [{ type: "text", text: "done" }] },
    );
    const turnId = crypto.randomUUID();
    const before = model.requests.length;
    await client.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("use tools") });
    const turn = await client.watchTurn(session.id, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    expect(leases.map((lease) => [lease.toolId, lease.toolCallId, lease.sessionId, lease.turnId, lease.fromScript])).toEqual([
      ["read", "c1", session.id, turnId, false],
      ["write", "c2", session.id, turnId, false],
      ["read", "c3", session.id, turnId, false],
      ["read", "c4", session.id, turnId, false],
    ]);
    expect(leases[0]!.permissions.length).toBeGreaterThan(0);
    const tools = turn.parts.filter((part) => part.type === "tool") as { toolCallId: string; state: string; fault?: { code: string; message: string }; canonicalResult?: { value: unknown } }[];
    const byCall = Object.fromEntries(tools.map((part) => [part.toolCallId, part]));
    expect(byCall["c1"]).toMatchObject({ state: "completed", canonicalResult: { value: expect.stringContaining("the note says 42") } });
    expect(byCall["c2"]).toMatchObject({ state: "failed", fault: { code: "tool_dispatch_refused", message: expect.stringContaining("writes are held by the host") } });
    expect(byCall["c3"]).toMatchObject({ state: "completed", canonicalResult: { value: "from the host's own store" } });
    expect(byCall["c4"]).toMatchObject({ state: "failed", fault: { code: "tool_dispatch_failed", message: expect.stringContaining("backend_down") } });
    // The refused write ran nothing; the model's next request saw every result.
    expect(existsSync(join(home!.root, "held.txt"))).toBe(false);
    const next = JSON.stringify(model.requests[before + 1]!.body.messages);
    expect(next).toContain("the note says 42");
    expect(next).toContain("from the host's own store");
    expect(next).toContain("writes are held by the host");

    // A denied call ends the Turn before custody: the port never sees it.
    leases.length = 0;
    model.enqueue({ events: [{ type: "tool_call", id: "d1", name: "read", arguments: { filePath: "secret.txt" } }] });
    const denied = crypto.randomUUID();
    await client.submitPrompt(session.id, { delivery: "queue", turnId: denied, prompt: textPrompt("read the secret") });
    const deniedTurn = await client.watchTurn(session.id, denied);
    expect(deniedTurn.outcome, JSON.stringify(deniedTurn)).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
    expect(leases).toEqual([]);

    // A CodeMode script's call is held too (fromScript), inside the `execute` call the host let proceed.
    model.enqueue({ events: [{ type: "tool_call", id: "x1", name: "execute", arguments: { code: `return await tools.read({ filePath: "remote.txt" });` } }] }, { events: [{ type: "text", text: "scripted" }] });
    const scripted = crypto.randomUUID();
    await client.submitPrompt(session.id, { delivery: "queue", turnId: scripted, prompt: textPrompt("run a script") });
    const scriptTurn = await client.watchTurn(session.id, scripted);
    expect(scriptTurn.outcome).toMatchObject({ kind: "completed" });
    expect(leases.map((lease) => [lease.toolId, lease.fromScript])).toEqual([
      ["execute", false],
      ["read", true],
    ]);
    const executed = scriptTurn.parts.find((part) => part.type === "tool" && part.toolId === "execute");
    expect(JSON.stringify(executed)).toContain("from the host's own store");
  });

  it("a lease's proceed() runs nothing once the dispatch settled or the call was abandoned", async () => {
    const stashed: ToolDispatchLease[] = [];
    const late: Promise<unknown>[] = [];
    let entered!: () => void;
    const inCustody = new Promise<void>((resolve) => (entered = resolve));
    const client = await start({
      toolDispatch: {
        async dispatch(lease) {
          const input = lease.input as { filePath?: string };
          if (input.filePath === "refused.txt") {
            stashed.push(lease);
            return { kind: "refused", message: "held" };
          }
          // Waits until the Turn is cancelled, then tries to run the write anyway.
          entered();
          await new Promise<void>((resolve) => (lease.signal.aborted ? resolve() : lease.signal.addEventListener("abort", () => resolve(), { once: true })));
          const attempt = lease.proceed();
          late.push(attempt.catch((error: unknown) => error));
          return await attempt;
        },
      },
    });
    const session = await client.createSession();
    model.enqueue({ events: [{ type: "tool_call", id: "r1", name: "write", arguments: { filePath: "refused.txt", content: "x" } }] }, { events: [{ type: "text", text: "done" }] });
    const turnId = crypto.randomUUID();
    await client.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("write it") });
    expect((await client.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed" });
    // The refused call's lease, kept by the host after its answer: proceed() rejects and writes nothing.
    await expect(stashed[0]!.proceed()).rejects.toMatchObject({ code: "tool_dispatch_failed" });
    expect(existsSync(join(home!.root, "refused.txt"))).toBe(false);

    // A call the Turn abandoned (cancelled while in the host's custody): proceed() rejects, nothing runs.
    model.enqueue({ events: [{ type: "tool_call", id: "a1", name: "write", arguments: { filePath: "abandoned.txt", content: "x" } }] });
    const cancelled = crypto.randomUUID();
    await client.submitPrompt(session.id, { delivery: "queue", turnId: cancelled, prompt: textPrompt("write later") });
    await inCustody;
    await client.cancelTurn(session.id, cancelled);
    expect((await client.watchTurn(session.id, cancelled)).outcome).toMatchObject({ kind: "cancelled" });
    await expect.poll(() => late.length).toBe(1);
    expect(await late[0]).toMatchObject({ code: "tool_dispatch_failed" });
    expect(existsSync(join(home!.root, "abandoned.txt"))).toBe(false);
  });
});

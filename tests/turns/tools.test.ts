// Tools and permissions inside a real Turn: built-in tools on a temp workdir, the permission
// engine's defaults, configured and Session rules, saved grants, replies (once / always /
// reject), the question tool, and invalid tool input.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart, type TurnStreamEvent } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { holdReplies, queue, replyPermission, runToEnd, seen, server, waitForTurnEvent } from "./helpers.js";

let h: ModelHarness;
let outside: string;
beforeAll(async () => {
  // A configured deny for any read of a path containing "classified".
  h = await startModelHarness({ config: { permissions: [{ action: "read", resource: "*classified*", effect: "deny" }] } });
  outside = join(h.home.dir, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "note.txt"), "NOTE-7f3a body\n");
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
});

const ofType = <K extends TurnStreamEvent["type"]>(events: TurnStreamEvent[], type: K) =>
  events.filter((event): event is Extract<TurnStreamEvent, { type: K }> => event.type === type);
const toolParts = (parts: readonly { type: string }[]) => parts.filter((part): part is ToolTurnPart => part.type === "tool");
const readCall = (filePath: string) => ({ type: "tool_call" as const, name: "read", arguments: { filePath } });
const done = (words = "Done.") => ({ events: [{ type: "text" as const, text: words }] });

const savedPermissions = async (sessionId: string) =>
  (await ok(sdk.listSavedPermissions({ client: h.api.client, path: { server, sessionId } }))).permissions;

describe("built-in tools in the workdir", () => {
  it("runs write, edit, read and shell without asking", async () => {
    const before = h.model.requests.length;
    h.model.enqueue(
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: "src/app.txt", content: "one\ntwo\n" } }] },
      { events: [{ type: "tool_call", name: "edit", arguments: { filePath: "src/app.txt", oldString: "two", newString: "three" } }] },
      { events: [readCall("src/app.txt")] },
      { events: [{ type: "tool_call", name: "shell", arguments: { command: "wc -l < src/app.txt && echo shell-ran" } }] },
      done("All four ran."),
    );
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Use every file tool");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "All four ran." });
    expect(toolParts(turn.parts).map((part) => [part.toolId, part.state, part.approval.state])).toEqual([
      ["write", "completed", "none"],
      ["edit", "completed", "none"],
      ["read", "completed", "none"],
      ["shell", "completed", "none"],
    ]);
    expect(readFileSync(join(h.home.root, "src", "app.txt"), "utf8")).toBe("one\nthree\n");
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
    const requests = h.model.requests.slice(before);
    expect(seen(requests[3])).toContain("three");
    expect(seen(requests[4])).toContain("shell-ran");
  });
});

describe("permission requests", () => {
  it("asks for a read outside the workdir (external_directory); a `once` reply runs the tool and saves nothing", async () => {
    const before = h.model.requests.length;
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] }, done("Read it."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read the outside note");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    expect(asked.toolId).toBe("read");
    expect(asked.request).toMatchObject({ sessionId, turnId, toolId: "read", action: "external_directory", resources: [`${outside}/*`], save: [`${outside}/*`] });
    const replied = await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    expect(replied.requestId).toBe(asked.request.id);
    expect(toolParts(replied.turn.parts)[0]!.approval).toMatchObject({ state: "resolved", decision: "allow", source: "remote", reply: "once" });
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Read it." });
    const [tool] = toolParts(turn.parts);
    expect(tool).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", source: "remote", reply: "once", request: { id: asked.request.id } } });
    expect(ofType(events, "turn.approval.resolved")).toEqual([
      expect.objectContaining({ requestId: asked.request.id, decision: "allow", source: "remote", reply: "once", partId: tool!.id }),
    ]);
    expect(seen(h.model.requests[before + 1])).toContain("NOTE-7f3a");
    expect(await savedPermissions(sessionId)).toEqual([]);
  });

  it("`always` saves a grant listed by listSavedPermissions; the next identical call runs without asking", async () => {
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] }, done(), { events: [readCall(join(outside, "note.txt"))] }, done("Again."));
    const sessionId = await h.createSession();
    const first = await queue(h, sessionId, "Read it");
    const asked = await waitForTurnEvent(h, sessionId, first.turnId, "turn.approval.requested");
    await ok(replyPermission(h, sessionId, asked.request.id, "always"));
    expect((await runToEnd(h, sessionId, first.turnId)).turn.phase).toBe("completed");
    const saved = await savedPermissions(sessionId);
    expect(saved).toEqual([
      { id: expect.any(String), sessionId, action: "external_directory", resource: `${outside}/*`, createdAt: expect.any(Number), sourcePermissionRequestId: asked.request.id },
    ]);

    const second = await queue(h, sessionId, "Read it again");
    const { events, turn } = await runToEnd(h, sessionId, second.turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Again." });
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
    expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "allow", source: "saved" })]);
    expect(toolParts(turn.parts)[0]).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", source: "saved" } });
    // The grant is per Session: another Session still asks.
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] }, done());
    const other = await h.createSession();
    const third = await queue(h, other, "Read it here");
    const again = await waitForTurnEvent(h, other, third.turnId, "turn.approval.requested");
    await ok(replyPermission(h, other, again.request.id, "once"));
    await runToEnd(h, other, third.turnId);
  });

  it("`reject` with a message denies the call: the tool never runs and the Turn fails with tool_denied", async () => {
    const before = h.model.requests.length;
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read the outside note");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    await ok(replyPermission(h, sessionId, asked.request.id, "reject", "Use the copy in the workdir instead."));
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
    expect(turn.outcome?.kind === "failed" && turn.outcome.fault.message).toContain("Use the copy in the workdir instead.");
    const [tool] = toolParts(turn.parts);
    expect(tool).toMatchObject({
      state: "denied",
      fault: { code: "permission_rejected" },
      approval: { state: "resolved", decision: "deny", source: "remote", reply: "reject", replyMessage: "Use the copy in the workdir instead." },
    });
    expect(tool!.canonicalResult).toBeUndefined();
    expect(ofType(events, "turn.approval.resolved")).toEqual([
      expect.objectContaining({ decision: "deny", reply: "reject", replyMessage: "Use the copy in the workdir instead." }),
    ]);
    expect(ofType(events, "turn.tool.completed")).toEqual([expect.objectContaining({ ok: false, toolId: "read" })]);
    // No second model request: the denial ended the Turn.
    expect(h.model.requests.length).toBe(before + 1);
  });

  it("a repeated identical reply is idempotent while the Turn runs; a different one is a 409; unknown ids are 404", async () => {
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] });
    const model = holdReplies(h, () => done("After the read."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read it");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    const first = await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    await model.held(1); // the model request after the tool: the Turn is still running
    const again = await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    expect(again.requestId).toBe(first.requestId);
    expect(await failure(replyPermission(h, sessionId, asked.request.id, "reject"))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
    expect(await failure(replyPermission(h, sessionId, randomUUID(), "once"))).toMatchObject({
      status: 404,
      body: { _tag: "NotFoundError", resource: "permission_request" },
    });
    model.release(1);
    expect((await runToEnd(h, sessionId, turnId)).turn.phase).toBe("completed");
    expect(await failure(replyPermission(h, randomUUID(), asked.request.id, "once"))).toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "session" } });
  });

  it("a configured deny refuses without asking and fails the Turn with tool_denied", async () => {
    writeFileSync(join(h.home.root, "classified.txt"), "top secret\n");
    const before = h.model.requests.length;
    h.model.enqueue({ events: [readCall("classified.txt")] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read the classified file");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
    expect(toolParts(turn.parts)[0]).toMatchObject({
      state: "denied",
      fault: { code: "permission_denied" },
      approval: { state: "resolved", decision: "deny", source: "config", request: { action: "read", resources: ["classified.txt"] } },
    });
    expect(h.model.requests.length).toBe(before + 1);
    expect(JSON.stringify(turn)).not.toContain("top secret");
  });

  it("a saved grant never overrides a configured deny", async () => {
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] }, done(), { events: [readCall(join(outside, "note.txt"))] });
    const sessionId = await h.createSession();
    const first = await queue(h, sessionId, "Read it");
    const asked = await waitForTurnEvent(h, sessionId, first.turnId, "turn.approval.requested");
    await ok(replyPermission(h, sessionId, asked.request.id, "always"));
    await runToEnd(h, sessionId, first.turnId);
    expect(await savedPermissions(sessionId)).toHaveLength(1);

    // Now the Session's rules deny the very pattern the grant allows.
    const { configuration } = await ok(sdk.getSessionConfiguration({ client: h.api.client, path: { server, sessionId } }));
    await ok(
      sdk.replaceSessionConfiguration({
        client: h.api.client,
        path: { server, sessionId },
        body: {
          expectedRevision: configuration.revision,
          permissions: [{ action: "external_directory", resource: `${outside}/*`, effect: "deny" }],
          approval: configuration.approval,
        },
      }),
    );
    const second = await queue(h, sessionId, "Read it again");
    const { events, turn } = await runToEnd(h, sessionId, second.turnId);
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
    expect(toolParts(turn.parts)[0]).toMatchObject({ state: "denied", approval: { decision: "deny", source: "config" } });
    expect(await savedPermissions(sessionId)).toHaveLength(1);
  });

  it("asks before reading .env; .env.example is allowed", async () => {
    writeFileSync(join(h.home.root, ".env"), "API_KEY=hunter2\n");
    writeFileSync(join(h.home.root, ".env.example"), "API_KEY=\n");
    h.model.enqueue({ events: [readCall(".env.example")] }, { events: [readCall(".env")] }, done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Check the env files");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    expect(asked.request).toMatchObject({ action: "read", resources: [".env"] });
    await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(ofType(events, "turn.approval.requested")).toHaveLength(1);
    expect(toolParts(turn.parts).map((part) => [part.input, part.state, part.approval.state])).toEqual([
      [{ filePath: ".env.example" }, "completed", "none"],
      [{ filePath: ".env" }, "completed", "resolved"],
    ]);
  });
});

// The API's side of tools on both hosts (tests/support/hosts.ts): permission asks and replies, the
// question tool, invalid calls. The suites below it are Node-only: they read disk paths outside
// the workdir (external_directory), run shell commands, or check the Node tool set.
describe.each(HOSTS)("on the %s host", (kind) => {
  // This block's own `h`: a host of `kind` with the same configured deny as the Node suites.
  let h: ModelHost;
  beforeAll(async () => {
    h = await startModelHost(kind, { permissions: [{ action: "read", resource: "*classified*", effect: "deny" }] });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  });

  describe("permission requests over the API", () => {
    /** A Turn that writes `files` through the `write` tool (allowed in the workdir), so both hosts hold them. */
    async function seed(files: Record<string, string>): Promise<void> {
      h.model.enqueue({ events: Object.entries(files).map(([filePath, content]) => ({ type: "tool_call" as const, name: "write", arguments: { filePath, content } })) }, done("Seeded."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Seed the files");
      expect((await runToEnd(h, sessionId, turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "Seeded." });
    }
    const savedGrants = async (sessionId: string) => (await ok(sdk.listSavedPermissions({ client: h.api.client, path: { server, sessionId } }))).permissions;

    beforeAll(async () => {
      await seed({ ".env": "API_KEY=hunter2-e1\n", "classified.txt": "top secret\n" });
    });

    it("asks before reading .env; a `once` reply runs the tool, the model sees the file, nothing is saved", async () => {
      const before = h.model.requests.length;
      h.model.enqueue({ events: [readCall(".env")] }, done("Read it."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Read the env file");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
      expect(asked.request).toMatchObject({ sessionId, turnId, toolId: "read", action: "read", resources: [".env"] });
      const replied = await ok(replyPermission(h, sessionId, asked.request.id, "once"));
      expect(replied.requestId).toBe(asked.request.id);
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Read it." });
      const [tool] = toolParts(turn.parts);
      expect(tool).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", source: "remote", reply: "once", request: { id: asked.request.id } } });
      expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ requestId: asked.request.id, decision: "allow", source: "remote", reply: "once", partId: tool!.id })]);
      expect(seen(h.model.requests[before + 1])).toContain("hunter2-e1");
      expect(await savedGrants(sessionId)).toEqual([]);
    });

    it("`always` saves a grant; the next identical call runs without asking; another Session still asks", async () => {
      h.model.enqueue({ events: [readCall(".env")] }, done(), { events: [readCall(".env")] }, done("Again."));
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "Read it");
      const asked = await waitForTurnEvent(h, sessionId, first.turnId, "turn.approval.requested");
      await ok(replyPermission(h, sessionId, asked.request.id, "always"));
      expect((await runToEnd(h, sessionId, first.turnId)).turn.phase).toBe("completed");
      expect(await savedGrants(sessionId)).toEqual([
        { id: expect.any(String), sessionId, action: "read", resource: ".env", createdAt: expect.any(Number), sourcePermissionRequestId: asked.request.id },
      ]);
      const second = await queue(h, sessionId, "Read it again");
      const { events, turn } = await runToEnd(h, sessionId, second.turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Again." });
      expect(ofType(events, "turn.approval.requested")).toEqual([]);
      expect(toolParts(turn.parts)[0]).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", source: "saved" } });
      h.model.enqueue({ events: [readCall(".env")] }, done());
      const other = await h.createSession();
      const third = await queue(h, other, "Read it here");
      const again = await waitForTurnEvent(h, other, third.turnId, "turn.approval.requested");
      await ok(replyPermission(h, other, again.request.id, "once"));
      await runToEnd(h, other, third.turnId);
    });

    it("`reject` with a message denies the call: the tool never runs, the Turn fails with tool_denied; unknown ids are 404", async () => {
      const before = h.model.requests.length;
      h.model.enqueue({ events: [readCall(".env")] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Read the env file");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
      const first = await ok(replyPermission(h, sessionId, asked.request.id, "reject", "Not the secrets."));
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
      expect(turn.outcome?.kind === "failed" && turn.outcome.fault.message).toContain("Not the secrets.");
      const [tool] = toolParts(turn.parts);
      expect(tool).toMatchObject({ state: "denied", fault: { code: "permission_rejected" }, approval: { decision: "deny", source: "remote", reply: "reject", replyMessage: "Not the secrets." } });
      expect(tool!.canonicalResult).toBeUndefined();
      expect(ofType(events, "turn.tool.completed")).toEqual([expect.objectContaining({ ok: false, toolId: "read" })]);
      expect(h.model.requests.length).toBe(before + 1);
      expect(JSON.stringify(turn)).not.toContain("hunter2-e1");
      // Unknown ids are 404 (a reply once the Turn ended is too: nothing is pending any more).
      expect(first.requestId).toBe(asked.request.id);
      expect(await failure(replyPermission(h, sessionId, randomUUID(), "once"))).toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "permission_request" } });
      expect(await failure(replyPermission(h, randomUUID(), asked.request.id, "once"))).toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "session" } });
    });

    it("a configured deny refuses without asking, and a Session rule's deny wins over a saved grant", async () => {
      const before = h.model.requests.length;
      h.model.enqueue({ events: [readCall("classified.txt")] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Read the classified file");
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
      expect(ofType(events, "turn.approval.requested")).toEqual([]);
      expect(toolParts(turn.parts)[0]).toMatchObject({ state: "denied", fault: { code: "permission_denied" }, approval: { decision: "deny", source: "config", request: { action: "read", resources: ["classified.txt"] } } });
      expect(h.model.requests.length).toBe(before + 1);
      expect(JSON.stringify(turn)).not.toContain("top secret");

      // A saved grant for .env, then the Session's rules deny it: no ask, denied by config.
      h.model.enqueue({ events: [readCall(".env")] }, done(), { events: [readCall(".env")] });
      const first = await queue(h, sessionId, "Read the env file");
      const asked = await waitForTurnEvent(h, sessionId, first.turnId, "turn.approval.requested");
      await ok(replyPermission(h, sessionId, asked.request.id, "always"));
      await runToEnd(h, sessionId, first.turnId);
      expect(await savedGrants(sessionId)).toHaveLength(1);
      const { configuration } = await ok(sdk.getSessionConfiguration({ client: h.api.client, path: { server, sessionId } }));
      await ok(
        sdk.replaceSessionConfiguration({
          client: h.api.client,
          path: { server, sessionId },
          body: { expectedRevision: configuration.revision, permissions: [{ action: "read", resource: ".env", effect: "deny" }], approval: configuration.approval },
        }),
      );
      const second = await queue(h, sessionId, "Read it again");
      const denied = await runToEnd(h, sessionId, second.turnId);
      expect(ofType(denied.events, "turn.approval.requested")).toEqual([]);
      expect(denied.turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
      expect(toolParts(denied.turn.parts)[0]).toMatchObject({ state: "denied", approval: { decision: "deny", source: "config" } });
      expect(await savedGrants(sessionId)).toHaveLength(1);
    });
  });

  describe("the question tool", () => {
    const ask = {
      type: "tool_call" as const,
      name: "question",
      arguments: {
        questions: [
          {
            question: "Which colour should the button be?",
            header: "Colour",
            options: [
              { label: "Blue", description: "Calm" },
              { label: "Red", description: "Loud" },
            ],
          },
        ],
      },
    };

    it("replyQuestion's answers reach the model; the Turn stream shows question.asked and question.replied", async () => {
      const before = h.model.requests.length;
      h.model.enqueue({ events: [ask] }, done("Blue it is."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Ask me");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.question.asked");
      expect(asked.request).toMatchObject({ sessionId, turnId, toolId: "question", questions: [{ header: "Colour" }] });
      const replied = await ok(
        sdk.replyQuestion({ client: h.api.client, path: { server, sessionId, questionRequestId: asked.request.id }, body: { answers: [["Blue"]] } }),
      );
      expect(replied.requestId).toBe(asked.request.id);
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Blue it is." });
      expect(toolParts(turn.parts)[0]).toMatchObject({ state: "completed", question: { state: "answered", answers: [["Blue"]] } });
      expect(ofType(events, "turn.question.replied")).toEqual([expect.objectContaining({ requestId: asked.request.id, answers: [["Blue"]] })]);
      expect(seen(h.model.requests[before + 1])).toContain("Blue");
    });

    it("refuses answers that do not match the questions with a 400", async () => {
      h.model.enqueue({ events: [ask] }, done());
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Ask me");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.question.asked");
      const path = { server, sessionId, questionRequestId: asked.request.id };
      expect(await failure(sdk.replyQuestion({ client: h.api.client, path, body: { answers: [["Blue"], ["Red"]] } }))).toMatchObject({ status: 400 });
      expect(await failure(sdk.replyQuestion({ client: h.api.client, path: { ...path, questionRequestId: randomUUID() }, body: { answers: [["Blue"]] } }))).toMatchObject({
        status: 404,
      });
      await ok(sdk.replyQuestion({ client: h.api.client, path, body: { answers: [["Red"]] } }));
      await runToEnd(h, sessionId, turnId);
    });

    it("rejectQuestion fails the tool with question_dismissed; the Turn goes on", async () => {
      h.model.enqueue({ events: [ask] }, done("No answer then."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Ask me");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.question.asked");
      await ok(sdk.rejectQuestion({ client: h.api.client, path: { server, sessionId, questionRequestId: asked.request.id } }));
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "No answer then." });
      expect(toolParts(turn.parts)[0]).toMatchObject({ state: "failed", fault: { code: "question_dismissed" }, question: { state: "dismissed" } });
      expect(ofType(events, "turn.question.rejected")).toEqual([expect.objectContaining({ requestId: asked.request.id })]);
      expect(ofType(events, "turn.question.asked")).toHaveLength(1);
    });
  });

  describe("invalid tool calls", () => {
    it("fails the tool with invalid_input (schema or JSON) or unknown_tool and the loop continues", async () => {
      const before = h.model.requests.length;
      h.model.enqueue(
        { events: [{ type: "tool_call", name: "read", arguments: { filePath: 42 } }] },
        { events: [{ type: "tool_call", name: "read", arguments: "{not json" }] },
        { events: [{ type: "tool_call", name: "teleport", arguments: {} }] },
        done("Gave up nicely."),
      );
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Try odd calls");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Gave up nicely." });
      const parts = toolParts(turn.parts);
      expect(parts.map((part) => [part.toolId, part.state, part.fault?.code])).toEqual([
        ["read", "failed", "invalid_input"],
        ["read", "failed", "invalid_input"],
        ["teleport", "failed", "unknown_tool"],
      ]);
      expect(parts[1]!.modelInput).toBe("{not json");
      expect(h.model.requests.length - before).toBe(4);
      expect(seen(h.model.requests[before + 1])).toContain("invalid_input");
    });
  });
});


describe("several calls in one model step", () => {
  it("authorizes in the model's order, then runs the approved calls concurrently; results keep the model's order", async () => {
    // Each command waits (bounded) for the other's marker file: run one after the other, the
    // first would give up alone; run at once, each sees the other.
    const waitFor = (mine: string, theirs: string) =>
      `touch ${mine}; for i in $(seq 1 100); do if [ -f ${theirs} ]; then echo ${mine}-saw-${theirs}; exit 0; fi; sleep 0.05; done; echo ${mine}-alone`;
    const before = h.model.requests.length;
    h.model.enqueue(
      {
        events: [
          { type: "tool_call", name: "shell", arguments: { command: waitFor("left", "right") } },
          { type: "tool_call", name: "shell", arguments: { command: waitFor("right", "left") } },
        ],
      },
      done("Both ran."),
    );
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Run both");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Both ran." });
    const results = toolParts(turn.parts).map((part) => JSON.stringify(part.canonicalResult));
    expect(results[0]).toContain("left-saw-right");
    expect(results[1]).toContain("right-saw-left");
    const toolMessages = JSON.stringify(h.model.requests[before + 1]?.body);
    expect(toolMessages.indexOf("left-saw-right")).toBeLessThan(toolMessages.indexOf("right-saw-left"));
  });

  it("asks for the second call's permission only after the first call's request is answered", async () => {
    writeFileSync(join(outside, "second.txt"), "SECOND-44\n");
    h.model.enqueue({ events: [readCall(join(outside, "note.txt")), readCall(join(outside, "second.txt"))] }, done("Read both."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read two outside files");
    const first = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    await ok(replyPermission(h, sessionId, first.request.id, "once"));
    const second = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested", (event) => event.request.id !== first.request.id);
    await ok(replyPermission(h, sessionId, second.request.id, "once"));
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Read both." });
    const order = events
      .filter((event) => event.type === "turn.approval.requested" || event.type === "turn.approval.resolved" || event.type === "turn.tool.completed")
      .map((event) => event.type);
    expect(order).toEqual(["turn.approval.requested", "turn.approval.resolved", "turn.approval.requested", "turn.approval.resolved", "turn.tool.completed", "turn.tool.completed"]);
  });
});

describe("hidden tools", () => {
  it("a tool whose every use the rules deny is not offered to the model; calling it anyway is unknown_tool", async () => {
    const hidden = await startModelHarness({ config: { permissions: [{ action: "shell", resource: "*", effect: "deny" }, { action: "webfetch", resource: "https://*", effect: "deny" }] } });
    try {
      hidden.model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "echo hi" } }] }, done("No shell."));
      const sessionId = await hidden.createSession();
      const { turnId } = await queue(hidden, sessionId, "Run a command");
      const { turn } = await runToEnd(hidden, sessionId, turnId);
      const offered = (hidden.model.requests[0]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
      expect(offered).not.toContain("shell");
      // A deny of some resources only leaves the tool offered.
      expect(offered).toEqual(["read", "write", "edit", "webfetch", "question", "pause", "task", "execute"]);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "No shell." });
      expect(toolParts(turn.parts)[0]).toMatchObject({ state: "failed", fault: { code: "unknown_tool" } });
    } finally {
      await hidden.close();
    }
  });
});

// CodeMode inside real Turns: the model's `execute` script calls the Turn's tools through Core —
// each inner call its own tool part (origin `codemode`), authorized like a direct call — a denial
// rejects inside the script instead of failing the Turn, an `ask` waits for the reply, direct-only
// tools are refused, cancelling the Turn stops the script, and `codemode.enabled: false` hides it.
// What only the API and the workspace tools drive runs on the Node host and on the Worker host in
// workerd (tests/support/hosts.ts); scenarios over disk files the test writes, or paths outside the
// workdir, are Node-only.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ToolTurnPart, Turn } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { cancel, queue, replyPermission, runToEnd, waitForTurnEvent } from "../turns/helpers.js";

const toolsOf = (request: RecordedRequest | undefined): string[] => ((request!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
const toolParts = (turn: Turn) => turn.parts.filter((part): part is ToolTurnPart => part.type === "tool");
const execute = (code: string) => ({ events: [{ type: "tool_call" as const, name: "execute", arguments: { code } }] });
const say = (text: string) => ({ events: [{ type: "text" as const, text }] });

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each(HOSTS)("execute in a Turn on the %s host", (kind) => {
  let host: ModelHost;
  beforeAll(async () => {
    host = await startModelHost(kind, { permissions: [{ action: "read", resource: "*secret*", effect: "deny" }] });
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  it("writes and reads five files in one script, every call its own authorized part, and returns a value", async () => {
    const h = host.fresh();
    const code = `
      const names = [1, 2, 3, 4, 5].map((n) => "cm/f" + n + ".txt");
      for (const [index, filePath] of names.entries()) await tools.write({ filePath, content: "file " + (index + 1) + " says " + (index + 1) * 11 + "\\n" });
      const texts = await Promise.all(names.map((filePath) => tools.read({ filePath })));
      console.log("read", texts.length, "files");
      return texts.map((text) => text.match(/says (\\d+)/)[1]).join(",");`;
    h.model.enqueue(execute(code), say("summarised"));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "summarise")).turnId);
    expect(toolsOf(h.model.requests[0])).toContain("execute");
    const parts = toolParts(turn);
    const script = parts.find((part) => part.toolId === "execute")!;
    expect(script).toMatchObject({ state: "completed", execution: { result: "11,22,33,44,55", logs: ["read 5 files"] } });
    const inner = parts.filter((part) => part.origin?.kind === "codemode");
    expect(inner.map((part) => part.toolId)).toEqual(["write", "write", "write", "write", "write", "read", "read", "read", "read", "read"]);
    expect(inner.every((part) => part.state === "completed" && part.origin?.kind === "codemode" && part.origin.parentToolCallId === script.toolCallId)).toBe(true);
    expect(JSON.stringify(h.model.requests[1]!.body)).toContain("11,22,33,44,55");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "summarised" });
  });

  it("a denied inner call rejects inside the script; the Turn goes on", async () => {
    const h = host.fresh();
    h.model.enqueue(execute(`try { await tools.read({ filePath: "secret.txt" }); return "read it"; } catch (error) { return "refused: " + error.message; }`), say("told"));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "try")).turnId);
    const inner = toolParts(turn).find((part) => part.origin?.kind === "codemode")!;
    expect(inner).toMatchObject({ toolId: "read", state: "denied", fault: { code: "permission_denied" } });
    expect(toolParts(turn).find((part) => part.toolId === "execute")).toMatchObject({ state: "completed", execution: { result: expect.stringMatching(/^refused: .*denied/) } });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "told" });
  });

  describe("with CodeMode disabled (Node config codemode.enabled, Worker HARNESS_CODEMODE_ENABLED)", () => {
    let off: ModelHost;
    beforeAll(async () => {
      off = await startModelHost(kind, { codemode: false });
    }, 60_000);
    afterAll(async () => {
      await off?.close();
    });

    it("hides execute", async () => {
      off.model.enqueue(say("ok"));
      const sessionId = await off.createSession();
      await runToEnd(off, sessionId, (await queue(off, sessionId, "hi")).turnId);
      expect(toolsOf(off.model.requests[0])).not.toContain("execute");
    });
  });
});

// Node only: the files and paths these scripts read are written on the disk by the test.
describe("execute in a Turn (Node host)", () => {
  it("reads five files in one script, every read its own authorized part, and returns the summary", async () => {
    h = await startModelHarness();
    for (let index = 1; index <= 5; index++) writeFileSync(join(h.home.root, `f${index}.txt`), `file ${index} says ${index * 11}\n`);
    const code = `
      const names = [1, 2, 3, 4, 5].map((n) => "f" + n + ".txt");
      const texts = await Promise.all(names.map((filePath) => tools.read({ filePath })));
      console.log("read", texts.length, "files");
      return texts.map((text) => text.match(/says (\\d+)/)[1]).join(",");`;
    h.model.enqueue(execute(code), say("summarised"));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "summarise")).turnId);
    expect(toolsOf(h.model.requests[0])).toContain("execute");
    const parts = toolParts(turn);
    const script = parts.find((part) => part.toolId === "execute")!;
    const inner = parts.filter((part) => part.origin?.kind === "codemode");
    expect(inner).toHaveLength(5);
    expect(inner.every((part) => part.toolId === "read" && part.state === "completed" && part.origin?.kind === "codemode" && part.origin.parentToolCallId === script.toolCallId)).toBe(true);
    expect(inner.map((part) => (part.origin as { ordinal: number }).ordinal).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(script).toMatchObject({ state: "completed", execution: { result: "11,22,33,44,55", logs: ["read 5 files"] } });
    expect(JSON.stringify(h.model.requests[1]!.body)).toContain("11,22,33,44,55");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "summarised" });
  });

  it("an inner call that asks waits for the reply; direct-only tools are refused", async () => {
    h = await startModelHarness();
    const outside = join(h.home.dir, "outside.txt");
    writeFileSync(outside, "outside words\n");
    const code = `
      let task = "allowed";
      try { await tools.task({ description: "x", prompt: "y", subagent_type: "general" }); } catch (error) { task = "refused"; }
      const text = await tools.read({ filePath: ${JSON.stringify(outside)} });
      return task + " / " + text.includes("outside words");`;
    h.model.enqueue(execute(code), say("done"));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "go");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    expect(asked.request.action).toBe("external_directory");
    await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(toolParts(turn).find((part) => part.toolId === "execute")).toMatchObject({ execution: { result: "refused / true" } });
  });

  it("cancelling the Turn stops a script waiting on an inner call", async () => {
    h = await startModelHarness();
    h.model.enqueue(execute(`await tools.read({ filePath: ${JSON.stringify(join("/", "etc", "hostname"))} }); return "never";`));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "go");
    await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    await cancel(h, sessionId, turnId, "stop");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "cancelled" });
    expect(toolParts(turn).find((part) => part.toolId === "execute")?.state).not.toBe("completed");
  });
});

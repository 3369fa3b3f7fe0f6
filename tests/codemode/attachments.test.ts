// CodeMode's `attachments` resource in real Turns: the Session's prompt images (Turn requests and
// promoted steers, in history order) as metadata plus one budgeted `attachments.read` over their
// concatenated bytes; the bytes match the digests and stay the same when later Turns add images,
// a fork keeps them, refused reads are typed errors, and the resource is released with its call.
import { createHash, randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ToolTurnPart, Turn } from "../../clients/index.js";
import { shutdownCodeModeEngine } from "../../services/codemode/index.js";
import { AttachmentResource, executeTool, type ToolContext } from "../../services/tools/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { noisePng, pngPart } from "../support/png.js";
import { forkCall } from "../history/helpers.js";
import { cancel, holdReplies, queue, runToEnd, submitCall } from "../turns/helpers.js";
import { context } from "../tools/helpers.js";

const execute = (code: string) => ({ events: [{ type: "tool_call" as const, name: "execute", arguments: { code } }] });
const say = (text: string) => ({ events: [{ type: "text" as const, text }] });
const sha256 = (bytes: Buffer): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const words = (value: string) => ({ type: "text" as const, text: value });

/** The `execution.result` of each completed `execute` part of `turn`, in order. */
function scriptResults(turn: Turn): unknown[] {
  const parts = turn.parts.filter((part): part is ToolTurnPart => part.type === "tool" && part.toolId === "execute");
  for (const part of parts) expect(part, JSON.stringify(part.fault)).toMatchObject({ state: "completed" });
  return parts.map((part) => part.execution?.result);
}

/** Reads every attachment whole (base64), each at the sum of the preceding lengths. */
const READ_ALL = `
  const files = [];
  let offset = 0;
  for (const entry of attachments) {
    files.push({ ...entry, offset, base64: await attachments.read(offset, entry.bytes, { encoding: "base64" }) });
    offset += entry.bytes;
  }
  return files;`;

interface ReadFile {
  name: string;
  mimeType: string;
  bytes: number;
  digest: string;
  offset: number;
  base64: string;
}

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
afterAll(() => shutdownCodeModeEngine());

describe("attachments in execute", () => {
  it("a script reads an attached PNG's bytes; they match the file and its digest", async () => {
    h = await startModelHarness();
    const png = noisePng(24, 16, 7);
    const code = `
      const head = await attachments.read(0, 8);
      const whole = await attachments.read(0, attachments[0].bytes, { encoding: "base64" });
      return { metadata: attachments, isBytes: head instanceof Uint8Array, head: Array.from(head), whole };`;
    h.model.enqueue(execute(code), say("seen"));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "", { prompt: [words("Look at this"), pngPart(png)] });
    const { turn } = await runToEnd(h, sessionId, turnId);
    const [result] = scriptResults(turn) as [{ metadata: unknown; isBytes: boolean; head: number[]; whole: string }];
    expect(result.metadata).toEqual([{ name: "image-1.png", mimeType: "image/png", bytes: png.length, digest: sha256(png) }]);
    expect(result.isBytes).toBe(true);
    expect(result.head).toEqual([...png.subarray(0, 8)]);
    expect(Buffer.from(result.whole, "base64").equals(png)).toBe(true);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "seen" });
  });

  it("offsets follow the preceding lengths; a later Turn's and a steer's images append and change nothing before them", async () => {
    h = await startModelHarness();
    const first = noisePng(10, 10, 1);
    const second = noisePng(13, 7, 2);
    const third = noisePng(9, 11, 3);
    const steered = noisePng(5, 5, 4);
    h.model.enqueue(execute(READ_ALL), say("two"));
    const sessionId = await h.createSession();
    const one = await queue(h, sessionId, "", { prompt: [words("two images"), pngPart(first), pngPart(second)] });
    const [before] = scriptResults((await runToEnd(h, sessionId, one.turnId)).turn) as [ReadFile[]];
    expect(before.map((file) => [file.name, file.offset, file.bytes, file.digest])).toEqual([
      ["image-1.png", 0, first.length, sha256(first)],
      ["image-2.png", first.length, second.length, sha256(second)],
    ]);
    expect(before.map((file) => Buffer.from(file.base64, "base64"))).toEqual([first, second]);

    // Turn 2: its own image, then a steer's, promoted after the first model step.
    const model = holdReplies(h, (_request, index) => (index === 1 ? execute(READ_ALL) : index === 2 ? execute(READ_ALL) : say("four")));
    const two = await queue(h, sessionId, "", { prompt: [words("one more"), pngPart(third)] });
    await model.held(1);
    const steer = { delivery: "steer", steerId: randomUUID(), expectedTurnId: two.turnId, prompt: [words("and this"), pngPart(steered)] };
    await ok(submitCall(h, sessionId, steer));
    model.release(1);
    await model.held(2);
    model.release(2);
    await model.held(3);
    model.release(3);
    const { turn } = await runToEnd(h, sessionId, two.turnId);
    const [beforeSteer, afterSteer] = scriptResults(turn) as [ReadFile[], ReadFile[]];
    expect(beforeSteer.map((file) => file.name)).toEqual(["image-1.png", "image-2.png", "image-3.png"]);
    expect(afterSteer.slice(0, 2)).toEqual(before);
    expect(afterSteer.map((file) => [file.name, file.offset, file.digest])).toEqual([
      ["image-1.png", 0, sha256(first)],
      ["image-2.png", first.length, sha256(second)],
      ["image-3.png", first.length + second.length, sha256(third)],
      ["image-4.png", first.length + second.length + third.length, sha256(steered)],
    ]);
    expect(afterSteer.map((file) => Buffer.from(file.base64, "base64"))).toEqual([first, second, third, steered]);
  });

  it("out-of-range, malformed and over-budget reads reject with typed AttachmentErrors the script can catch", async () => {
    h = await startModelHarness();
    const png = noisePng(200, 200, 9);
    const code = `
      const size = attachments[0].bytes;
      const codes = {};
      for (const [label, offset, length] of [["past the end", size, 1], ["longer than the file", 0, size + 1], ["negative", -1, 4], ["fraction", 0.5, 1]]) {
        try { await attachments.read(offset, length); codes[label] = "read"; } catch (error) { codes[label] = error.name + ":" + error.code; }
      }
      const empty = (await attachments.read(size, 0)).length;
      let reads = 0, exhausted;
      for (;;) {
        try { await attachments.read(0, size); reads++; } catch (error) { exhausted = { name: error.name, code: error.code, message: error.message }; break; }
      }
      return { codes, empty, reads, exhausted };`;
    h.model.enqueue(execute(code), say("done"));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "", { prompt: [words("noise"), pngPart(png)] });
    const { turn } = await runToEnd(h, sessionId, turnId);
    const [result] = scriptResults(turn) as [{ codes: Record<string, string>; empty: number; reads: number; exhausted: { name: string; code: string; message: string } }];
    expect(result.codes).toEqual({
      "past the end": "AttachmentError:attachment_out_of_range",
      "longer than the file": "AttachmentError:attachment_out_of_range",
      negative: "AttachmentError:attachment_invalid_read",
      fraction: "AttachmentError:attachment_invalid_read",
    });
    expect(result.empty).toBe(0);
    // The out-of-range and malformed reads returned nothing and cost nothing.
    expect(result.reads).toBe(Math.floor((16 * 1024 * 1024) / png.length));
    expect(result.exhausted).toMatchObject({ name: "AttachmentError", code: "attachment_budget_exhausted", message: expect.stringContaining("16777216") });
  });

  it("a fork keeps its source's attachments", async () => {
    h = await startModelHarness();
    const png = noisePng(12, 12, 5);
    h.model.enqueue(say("noted"));
    const sessionId = await h.createSession();
    await runToEnd(h, sessionId, (await queue(h, sessionId, "", { prompt: [words("remember this"), pngPart(png)] })).turnId);
    const forked = (await ok(forkCall(h, sessionId, randomUUID()))).session;
    h.model.enqueue(execute(READ_ALL), say("still there"));
    const { turn } = await runToEnd(h, forked.id, (await queue(h, forked.id, "what was attached?")).turnId);
    const [files] = scriptResults(turn) as [ReadFile[]];
    expect(files.map((file) => [file.name, file.bytes, file.digest])).toEqual([["image-1.png", png.length, sha256(png)]]);
    expect(Buffer.from(files[0]!.base64, "base64").equals(png)).toBe(true);
  });

  it("a Turn cancelled while queued contributes nothing; a Turn's visibility filter hides the images of the Turns it hides", async () => {
    h = await startModelHarness();
    const [a, b, c] = [noisePng(6, 6, 11), noisePng(7, 7, 12), noisePng(8, 8, 13)];
    const model = holdReplies(h, () => say("one"));
    const sessionId = await h.createSession();
    const one = await queue(h, sessionId, "", { prompt: [words("a"), pngPart(a)] });
    await model.held(1);
    const never = await queue(h, sessionId, "", { prompt: [words("c"), pngPart(c)] });
    await cancel(h, sessionId, never.turnId, "not now");
    model.release(1);
    await runToEnd(h, sessionId, one.turnId);
    h.model.enqueue(execute(READ_ALL), say("three"), execute(READ_ALL), say("four"));
    const three = await queue(h, sessionId, "", { prompt: [words("b"), pngPart(b)] });
    const [all] = scriptResults((await runToEnd(h, sessionId, three.turnId)).turn) as [ReadFile[]];
    expect(all.map((file) => file.digest)).toEqual([sha256(a), sha256(b)]);
    const four = await queue(h, sessionId, "without the first", { visibility: { excludedTurnIds: [one.turnId] } });
    const [visible] = scriptResults((await runToEnd(h, sessionId, four.turnId)).turn) as [ReadFile[]];
    expect(visible.map((file) => [file.name, file.offset, file.digest])).toEqual([["image-1.png", 0, sha256(b)]]);
  });

  it("a Session without images sees an empty list; only the empty read at 0 succeeds", async () => {
    h = await startModelHarness();
    const code = `
      let refused;
      try { await attachments.read(0, 1); } catch (error) { refused = error.code; }
      return { list: attachments, empty: (await attachments.read(0, 0)).length, refused };`;
    h.model.enqueue(execute(code), say("none"));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "anything attached?")).turnId);
    expect(scriptResults(turn)).toEqual([{ list: [], empty: 0, refused: "attachment_out_of_range" }]);
  });
});

describe("the attachments resource's custody", () => {
  const withResource = (resource: AttachmentResource): ToolContext => ({
    ...context("/"),
    codemode: { tools: () => [], call: () => Promise.reject(new Error("no tools")) },
    sessionResources: { attachments: async () => resource, archive: async () => undefined },
  });

  it("is released when the execute call settles: nothing is readable after it, also a read the script left running", async () => {
    const resource = new AttachmentResource([{ name: "image-1.png", mimeType: "image/png", bytes: noisePng(4, 4) }]);
    const output = await executeTool.execute({ code: `attachments.read(0, 4); return (await attachments.read(0, 8)).length;` }, withResource(resource));
    expect(output.execution?.result).toBe(8);
    expect(resource.released).toBe(true);
    expect(() => resource.read(0, 1)).toThrow(expect.objectContaining({ _tag: "AttachmentError", code: "attachment_released" }));
  });

  it("is released when the script fails", async () => {
    const resource = new AttachmentResource([{ name: "image-1.png", mimeType: "image/png", bytes: noisePng(4, 4) }]);
    await expect(executeTool.execute({ code: `throw new Error("boom");` }, withResource(resource))).rejects.toMatchObject({ code: "script_error" });
    expect(() => resource.read(0, 1)).toThrow(expect.objectContaining({ code: "attachment_released" }));
  });

  it("copies the bytes it was made from and charges only what reads return", () => {
    const source = Buffer.from("abcdef");
    const resource = new AttachmentResource([{ name: "a", mimeType: "text/plain", bytes: source }], { budgetBytes: 5 });
    source.fill(0);
    expect(resource.read(1, 3).toString()).toBe("bcd");
    expect(resource.metadata[0]!.digest).toBe(sha256(Buffer.from("abcdef")));
    expect(() => resource.read(0, 3)).toThrow(expect.objectContaining({ code: "attachment_budget_exhausted" }));
    expect(resource.read(0, 2).toString()).toBe("ab");
    expect(resource.remainingBytes).toBe(0);
  });
});

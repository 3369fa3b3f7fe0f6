// `read` of the calling Session's own resources: an archived tool result (a long shell output's
// artifact) in exact byte pages continued with the complete `next` object to the exact end, the
// same through its path; another Session's artifact refused by every address; text attachments
// paged the same way, images and tampered continuations refused with typed errors.
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolTurnPart, Turn } from "../../clients/index.js";
import { shutdownCodeModeEngine } from "../../services/codemode/index.js";
import { AttachmentResource, MAX_FILE_READ_BYTES, readTool, type ArchivedToolResult, type ToolContext } from "../../services/tools/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd } from "../turns/helpers.js";
import { call, context, expectCode, json, workspace } from "./helpers.js";

interface Page {
  kind: string;
  range: { start: number; end: number };
  totalBytes: number;
  content: string;
  next: Record<string, unknown> | null;
}

const toolCall = (name: string, args: unknown) => ({ events: [{ type: "tool_call" as const, name, arguments: args }] });
const say = (text: string) => ({ events: [{ type: "text" as const, text }] });
const readParts = (turn: Turn) => turn.parts.filter((part): part is ToolTurnPart => part.type === "tool" && part.toolId === "read");
/** The content of the last tool message the model was sent (chat protocol). */
function lastToolResult(request: RecordedRequest): string | undefined {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages[messages.length - 1];
  return last?.role === "tool" ? String(last.content) : undefined;
}

// 3,000 lines with 2-, 3- and 4-byte characters, then one 6,000-character line: about 230 KB.
const COMMAND = `awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "line %05d é€😀 %s\\n", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; s = ""; for (j = 0; j < 6000; j++) s = s "y"; print s }'`;

describe("read: archived tool results in a real Turn", () => {
  let h: ModelHarness;
  let owner: string;
  let artifact: { id: string; path: string };
  let file: Buffer;
  let turn: Turn;

  beforeAll(async () => {
    h = await startModelHarness();
    // The model runs the command, then reads its archive with `artifact`, follows every `next`
    // unchanged, and reads it once more through its path.
    let phase: "pages" | "path" | "done" = "pages";
    let spilledPath = "";
    h.model.reply((request) => {
      const result = lastToolResult(request) ?? "";
      const spilled = /the full output is in (\S+)\.\)/.exec(result);
      if (spilled) {
        spilledPath = spilled[1]!;
        return toolCall("read", { artifact: spilledPath });
      }
      const page = JSON.parse(result) as Page;
      if (phase === "pages" && page.next !== null) return toolCall("read", { next: page.next });
      if (phase === "pages") {
        phase = "path";
        return toolCall("read", { filePath: spilledPath });
      }
      phase = "done";
      return say("read it all");
    });
    h.model.enqueue(toolCall("shell", { command: COMMAND }));
    owner = await h.createSession();
    const { turnId } = await queue(h, owner, "run it and read everything");
    turn = (await runToEnd(h, owner, turnId)).turn;
    const shell = turn.parts.find((part): part is ToolTurnPart => part.type === "tool" && part.toolId === "shell")!;
    artifact = { id: shell.artifact!.id, path: shell.artifact!.path };
    file = readFileSync(join(h.home.root, artifact.path));
  });
  afterAll(async () => {
    await h.close();
    await shutdownCodeModeEngine();
  });

  it("pages the archive with next, without repeating or skipping a byte, to its exact end", () => {
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "read it all" });
    const parts = readParts(turn);
    for (const part of parts) expect(part, JSON.stringify(part.fault)).toMatchObject({ state: "completed" });
    const pages = parts.map((part) => part.canonicalResult!.value as Page);
    const paged = pages.slice(0, -1);
    expect(file.length).toBeGreaterThan(200_000);
    expect(paged.length).toBeGreaterThanOrEqual(5);
    expect(paged.every((page) => page.kind === "artifact" && page.totalBytes === file.length)).toBe(true);
    expect(paged[0]!.range.start).toBe(0);
    for (let i = 1; i < paged.length; i++) expect(paged[i]!.range.start).toBe(paged[i - 1]!.range.end);
    expect(paged.at(-1)!.range.end).toBe(file.length);
    expect(paged.at(-1)!.next).toBeNull();
    expect(Buffer.from(paged.map((page) => page.content).join(""), "utf8").equals(file)).toBe(true);
    // Each page is what its range says, and stays within the 50 KiB read limit.
    for (const page of paged) {
      expect(Buffer.from(page.content, "utf8").equals(file.subarray(page.range.start, page.range.end))).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(MAX_FILE_READ_BYTES);
    }
    // The 6,000-character last line arrives whole, not cut.
    expect(paged.map((page) => page.content).join("")).toContain("y".repeat(6000));
    // The path reads the same archive from its start.
    expect(pages.at(-1)).toMatchObject({ kind: "artifact", id: artifact.id, range: { start: 0, end: paged[0]!.range.end }, content: paged[0]!.content });
  });

  it("refuses another Session's archive by id, path and next object, with a typed error", async () => {
    const code = `
      const codes = [];
      for (const input of ${JSON.stringify([
        { artifact: artifact.id },
        { artifact: artifact.path },
        { filePath: artifact.path },
        { next: { kind: "artifact", id: artifact.id, afterByte: 0, totalBytes: file.length } },
      ])}) {
        try { await tools.read(input); codes.push("read"); } catch (error) { codes.push(error.code); }
      }
      return codes;`;
    h.model.enqueue(toolCall("execute", { code }), say("refused"));
    const other = await h.createSession();
    const { turn: attempt } = await runToEnd(h, other, (await queue(h, other, "read the other Session's output")).turnId);
    const script = attempt.parts.find((part): part is ToolTurnPart => part.type === "tool" && part.toolId === "execute")!;
    expect(script.execution?.result).toEqual(["resource_not_in_session", "resource_not_in_session", "resource_not_in_session", "resource_not_in_session"]);
    expect(readParts(attempt).map((part) => part.fault?.code)).toEqual(Array(4).fill("resource_not_in_session"));
  });
});

describe("read: Session resources through the tool", () => {
  const text = `${"naïve café — 東京 😀 line\n".repeat(3000)}${"z".repeat(70_000)}`;
  const textBytes = Buffer.from(text, "utf8");
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const withResources = (workdir: string, archive?: ArchivedToolResult): ToolContext => ({
    ...context(workdir),
    sessionResources: {
      attachments: async () =>
        new AttachmentResource([
          { name: "image-1.png", mimeType: "image/png", bytes: png },
          { name: "notes.txt", mimeType: "text/plain", bytes: textBytes },
        ]),
      archive: async (reference) => (archive && (reference === archive.id || reference === archive.path) ? archive : undefined),
    },
  });

  it("pages a text attachment with next to its exact end, never inside a character", async () => {
    const ws = workspace();
    try {
      const ctx = withResources(ws.workdir);
      const pages: Page[] = [json(await call(readTool, { attachment: "notes.txt" }, ctx)) as unknown as Page];
      while (pages.at(-1)!.next) pages.push(json(await call(readTool, { next: pages.at(-1)!.next }, ctx)) as unknown as Page);
      expect(pages.length).toBeGreaterThan(3);
      expect(pages.map((page) => page.content).join("")).toBe(text);
      expect(pages[0]).toMatchObject({ kind: "attachment", name: "notes.txt", mimeType: "text/plain", totalBytes: textBytes.length, digest: `sha256:${createHash("sha256").update(textBytes).digest("hex")}` });
      for (let i = 1; i < pages.length; i++) expect(pages[i]!.range.start).toBe(pages[i - 1]!.range.end);
    } finally {
      ws.dispose();
    }
  });

  it("refuses images, unknown names, altered continuations and offset/limit with typed errors", async () => {
    const ws = workspace();
    try {
      const ctx = withResources(ws.workdir);
      await expectCode(call(readTool, { attachment: "image-1.png" }, ctx), "not_text");
      await expectCode(call(readTool, { attachment: "image-9.png" }, ctx), "resource_not_in_session");
      const first = json(await call(readTool, { attachment: "notes.txt" }, ctx)) as unknown as Page;
      await expectCode(call(readTool, { next: { ...first.next, digest: "sha256:00" } }, ctx), "invalid_continuation");
      await expectCode(call(readTool, { next: { ...first.next, afterByte: textBytes.length + 1 } }, ctx), "invalid_continuation");
      await expectCode(call(readTool, { attachment: "notes.txt", offset: 2 }, ctx), "invalid_input");
      await expectCode(call(readTool, { attachment: "notes.txt", filePath: "a.txt" }, ctx), "invalid_input");
      await expectCode(call(readTool, { artifact: "5b0a0a49-2ad1-4b38-9a37-0a6c2f0b8d11" }, ctx), "resource_not_in_session");
    } finally {
      ws.dispose();
    }
  });

  it("refuses a continuation once the archived file changed", async () => {
    const ws = workspace();
    try {
      const id = "5b0a0a49-2ad1-4b38-9a37-0a6c2f0b8d11";
      const path = `.ze-harness/tool-output/${id}.log`;
      const absolutePath = ws.write(path, "a".repeat(120_000));
      const ctx = withResources(ws.workdir, { id, path, absolutePath, observedBytes: 120_000, state: "complete" });
      const first = json(await call(readTool, { artifact: id }, ctx)) as unknown as Page;
      expect(first.next).toMatchObject({ kind: "artifact", id, afterByte: first.range.end, totalBytes: 120_000 });
      appendFileSync(absolutePath, "more");
      await expectCode(call(readTool, { next: first.next }, ctx), "invalid_continuation");
      // A file in the artifacts directory that is no archive of this Session is refused, also by path.
      ws.write(".ze-harness/tool-output/other.log", "x");
      await expectCode(call(readTool, { filePath: ".ze-harness/tool-output/other.log" }, ctx), "resource_not_in_session");
      writeFileSync(absolutePath, "");
      expect(json(await call(readTool, { filePath: path }, ctx))).toMatchObject({ kind: "artifact", totalBytes: 0, content: "", next: null });
    } finally {
      ws.dispose();
    }
  });
});

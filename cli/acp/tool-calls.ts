// How a Ze tool part looks to an ACP client: its kind (the icon), title, status, the files it
// touches (locations, for follow-along) and its content (a diff for write/edit, the result or
// the live output otherwise). Pure functions of the part and the Session's workdir.
import { isAbsolute, resolve } from "node:path";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ToolResult, TurnPart } from "../../clients/index.js";

export type ToolPart = Extract<TurnPart, { type: "tool" }>;

/** Longest text a tool call's content carries (results stay readable in full through Ze). */
const MAX_CONTENT_CHARS = 50_000;

const KINDS: Readonly<Record<string, acp.ToolKind>> = {
  read: "read",
  write: "edit",
  edit: "edit",
  shell: "execute",
  execute: "execute",
  webfetch: "fetch",
  skill: "read",
  task: "think",
  question: "other",
  pause: "other",
};

export function toolKind(toolId: string): acp.ToolKind {
  return KINDS[toolId] ?? "other";
}

const field = (input: unknown, name: string): string | undefined => {
  const value = input !== null && typeof input === "object" ? (input as Record<string, unknown>)[name] : undefined;
  return typeof value === "string" ? value : undefined;
};

const firstLine = (text: string, max = 120): string => {
  const line = text.split("\n", 1)[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

export function toolTitle(part: ToolPart): string {
  const input = part.input;
  const path = field(input, "filePath");
  switch (part.toolId) {
    case "read":
      return path !== undefined ? `Read ${path}` : "Read";
    case "write":
      return path !== undefined ? `Write ${path}` : "Write";
    case "edit":
      return path !== undefined ? `Edit ${path}` : "Edit";
    case "shell": {
      const command = field(input, "command");
      return command !== undefined ? `Run ${firstLine(command)}` : "Run a command";
    }
    case "webfetch": {
      const url = field(input, "url");
      return url !== undefined ? `Fetch ${url}` : "Fetch";
    }
    case "task": {
      const description = field(input, "description");
      return description !== undefined ? `Task: ${firstLine(description)}` : "Task";
    }
    case "skill": {
      const name = field(input, "name");
      return name !== undefined ? `Load Skill ${name}` : "Load a Skill";
    }
    case "question":
      return "Ask a question";
    case "execute":
      return "Run a script";
    default:
      return part.toolId;
  }
}

export function toolStatus(part: ToolPart): acp.ToolCallStatus {
  switch (part.state) {
    case "completed":
      return "completed";
    case "failed":
    case "denied":
      return "failed";
    default:
      return part.approval.state === "pending" || part.question?.state === "pending" ? "pending" : "in_progress";
  }
}

export function toolLocations(part: ToolPart, workdir: string): acp.ToolCallLocation[] {
  const path = field(part.input, "filePath");
  if (path === undefined) return [];
  const absolute = isAbsolute(path) ? path : resolve(workdir, path);
  const offset = part.toolId === "read" && part.input !== null && typeof part.input === "object" ? (part.input as { offset?: unknown }).offset : undefined;
  return [{ path: absolute, ...(typeof offset === "number" && Number.isInteger(offset) && offset > 0 ? { line: offset } : {}) }];
}

const cap = (text: string): string => (text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}\n… (truncated)` : text);

const textContent = (text: string): acp.ToolCallContent => ({ type: "content", content: { type: "text", text: cap(text) } });

function resultContent(result: ToolResult): acp.ToolCallContent[] {
  switch (result.format) {
    case "text":
      return result.value === "" ? [] : [textContent(result.value)];
    case "json":
      return [textContent(JSON.stringify(result.value, null, 2))];
    case "content":
      return result.value.flatMap((item): acp.ToolCallContent[] => {
        if (item.type === "text") return item.text === "" ? [] : [textContent(item.text)];
        if (item.type === "json") return [textContent(JSON.stringify(item.value, null, 2))];
        const source = item.source;
        if (source.type === "base64") return [{ type: "content", content: { type: "image", data: source.data, mimeType: source.mimeType } }];
        return [{ type: "content", content: { type: "resource_link", uri: source.url, name: source.url } }];
      });
  }
}

export function toolContent(part: ToolPart, workdir: string): acp.ToolCallContent[] {
  const content: acp.ToolCallContent[] = [];
  const path = field(part.input, "filePath");
  const absolute = path === undefined ? undefined : isAbsolute(path) ? path : resolve(workdir, path);
  if (part.toolId === "edit" && absolute !== undefined) {
    const oldText = field(part.input, "oldString");
    const newText = field(part.input, "newString");
    if (newText !== undefined) content.push({ type: "diff", path: absolute, oldText: oldText ?? null, newText });
  } else if (part.toolId === "write" && absolute !== undefined) {
    const newText = field(part.input, "content");
    if (newText !== undefined) content.push({ type: "diff", path: absolute, oldText: null, newText });
  }
  if (part.state === "failed" || part.state === "denied") {
    if (part.fault) content.push(textContent(part.fault.message));
    return content;
  }
  // Write and edit show their diff; the other tools their result, or the live output while running.
  if (part.toolId === "write" || part.toolId === "edit") return content;
  if (part.canonicalResult) return [...content, ...resultContent(part.canonicalResult)];
  if (part.activity?.preview) return [...content, textContent(part.activity.preview)];
  return content;
}

/** The whole ACP view of a tool part (a `tool_call`, or a `tool_call_update` replacing every field). */
export function toolCall(part: ToolPart, workdir: string): acp.ToolCall {
  return {
    toolCallId: part.id,
    title: toolTitle(part),
    name: part.toolId,
    kind: toolKind(part.toolId),
    status: toolStatus(part),
    content: toolContent(part, workdir),
    locations: toolLocations(part, workdir),
    rawInput: part.input,
    ...(part.canonicalResult !== undefined ? { rawOutput: part.canonicalResult } : {}),
  };
}

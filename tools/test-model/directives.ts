// Prompt directives: with `directives: true` (CLI `--directives`) a request that neither the
// queue nor reply() answers is answered from `@…` lines in its last user message, so a prompt
// alone can make the model call tools (README "Prompt directives"). The request is first
// reduced to a protocol-neutral conversation (user text, assistant rounds, tool results), so
// the same prompt behaves alike over Chat Completions, Responses and Messages.
import type { ModelEvent, RecordedRequest, ScriptedTurn } from "./script.js";

/** How much of the tool results the default `done: …` answer repeats. */
export const DONE_TEXT_LIMIT = 500;

type Entry = { kind: "user"; text: string } | { kind: "assistant" } | { kind: "tool"; text: string };

interface ToolCallDirective {
  name: string;
  arguments: Record<string, unknown>;
}

/** One answer of a script: its text (from `@say`) and tool calls (from `@call`), in line order. */
type Step = ModelEvent[];

interface Script {
  steps: Step[];
  /** The `@then` text, answered once the steps are used up. */
  then: string | null;
}

/** Text of a content value: a string, or the text of its parts (images as `[image]`). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const pieces: string[] = [];
  for (const part of content as unknown[]) {
    if (typeof part === "string") pieces.push(part);
    else if (typeof part !== "object" || part === null) continue;
    else if (typeof (part as { text?: unknown }).text === "string") pieces.push((part as { text: string }).text);
    else if (/image/.test(String((part as { type?: unknown }).type))) pieces.push("[image]");
  }
  return pieces.join("\n");
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** The request as user / assistant / tool entries, system and developer messages left out. */
function entriesOf(request: RecordedRequest): Entry[] {
  const body = record(request.body);
  const entries: Entry[] = [];
  if (request.protocol === "chat") {
    for (const message of Array.isArray(body["messages"]) ? body["messages"] : []) {
      const { role, content } = record(message);
      if (role === "user") entries.push({ kind: "user", text: textOf(content) });
      else if (role === "assistant") entries.push({ kind: "assistant" });
      else if (role === "tool" || role === "function") entries.push({ kind: "tool", text: textOf(content) });
    }
  } else if (request.protocol === "responses") {
    const input = body["input"];
    if (typeof input === "string") entries.push({ kind: "user", text: input });
    for (const item of Array.isArray(input) ? input : []) {
      const { type, role, content, output } = record(item);
      if (typeof type === "string" && type.endsWith("_call_output")) entries.push({ kind: "tool", text: textOf(output) });
      else if (role === "user") entries.push({ kind: "user", text: textOf(content) });
      else if (role === "assistant" || (typeof type === "string" && (type.endsWith("_call") || type === "reasoning"))) entries.push({ kind: "assistant" });
    }
  } else {
    for (const message of Array.isArray(body["messages"]) ? body["messages"] : []) {
      const { role, content } = record(message);
      if (role === "assistant") {
        entries.push({ kind: "assistant" });
        continue;
      }
      if (role !== "user") continue;
      // tool_result blocks lead a user message; any other content after them is the user speaking.
      const blocks: unknown[] = Array.isArray(content) ? content : [content];
      const rest = blocks.filter((block) => record(block)["type"] !== "tool_result");
      for (const block of blocks) {
        if (record(block)["type"] === "tool_result") entries.push({ kind: "tool", text: textOf(record(block)["content"]) });
      }
      if (rest.length > 0) entries.push({ kind: "user", text: textOf(rest) });
    }
  }
  // One assistant turn can be several items (Responses: a message and its function calls).
  return entries.filter((entry, index) => !(entry.kind === "assistant" && entries[index - 1]?.kind === "assistant"));
}

const DIRECTIVE = /^\s*@(call|say|then|next)(?:\s+(.*?))?\s*$/;

/** The directives of `text`, or why a directive line is malformed. */
function parseDirectives(text: string): Script | string {
  const steps: Step[] = [];
  let step: Step = [];
  const then: string[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const match = DIRECTIVE.exec(line);
    if (!match) continue;
    const [, keyword, rest = ""] = match;
    const where = `line ${index + 1} (${JSON.stringify(line.trim())})`;
    if (keyword === "next") {
      steps.push(step);
      step = [];
    } else if (keyword === "then") {
      then.push(rest);
    } else if (keyword === "say") {
      const last = step.at(-1);
      if (last?.type === "text") last.text += `\n${rest}`;
      else step.push({ type: "text", text: rest });
    } else {
      const call = parseCall(rest);
      if (typeof call === "string") return `${where}: ${call}`;
      step.push({ type: "tool_call", name: call.name, arguments: call.arguments });
    }
  }
  steps.push(step);
  // Only `@then` lines (or none at all): no steps.
  if (steps.length === 1 && step.length === 0) return { steps: [], then: then.length > 0 ? then.join("\n") : null };
  const empty = steps.findIndex((candidate) => candidate.length === 0);
  if (empty !== -1) return `step ${empty + 1} has no @call or @say (check the @next lines)`;
  return { steps, then: then.length > 0 ? then.join("\n") : null };
}

function parseCall(rest: string): ToolCallDirective | string {
  const match = /^(\S+)(?:\s+(.*))?$/.exec(rest);
  if (!match) return "@call needs a tool name: @call <toolName> <json-arguments>";
  const [, name = "", json = ""] = match;
  if (json.trim() === "") return { name, arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return `the arguments of @call ${name} are not JSON (${error instanceof Error ? error.message : String(error)}); they must be one JSON object on the same line`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `the arguments of @call ${name} must be a JSON object`;
  return { name, arguments: value as Record<string, unknown> };
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

function firstLine(text: string): string {
  return text.trim().split(/\r?\n/, 1)[0]?.trim() ?? "";
}

/**
 * The directive answer to `request`: a scripted turn (usage left to the usual estimate), or a
 * sentence saying why a directive line is malformed.
 *
 * Round k of a Turn is the number of assistant turns after the last user message: round 0
 * answers the first step, round k the (k+1)-th; past the steps comes the `@then` text, else
 * `done: <the latest tool results>` (or the echo when there are no directives and no tool
 * results). Every tool-result round moves one step on, so no script loops.
 */
export function directiveTurn(request: RecordedRequest): ScriptedTurn | string {
  const entries = entriesOf(request);
  const lastUser = entries.findLastIndex((entry) => entry.kind === "user");
  const user = entries[lastUser];
  const userText = user?.kind === "user" ? user.text : "";
  const round = entries.slice(lastUser + 1).filter((entry) => entry.kind === "assistant").length;

  const script = parseDirectives(userText);
  if (typeof script === "string") return `test-model: bad directive in the last user message, ${script}`;
  const step = script.steps[round];
  if (step) return { events: step };
  if (script.then !== null) return { events: [{ type: "text", text: script.then }] };
  const trailing: string[] = [];
  for (let index = entries.length - 1; index > lastUser && entries[index]?.kind === "tool"; index -= 1) {
    trailing.unshift((entries[index] as { text: string }).text);
  }
  if (round === 0 && trailing.length === 0) return { events: [{ type: "text", text: `echo: ${firstLine(userText)}` }] };
  return { events: [{ type: "text", text: `done: ${truncate(trailing.join("\n"), DONE_TEXT_LIMIT)}` }] };
}

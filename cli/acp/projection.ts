// A Turn as ACP session updates. The projector is shown the Turn as it grows (each snapshot the
// watch holds) and answers only what changed since the last one: text and reasoning as message /
// thought chunks (each part's new suffix), a tool part as one `tool_call` when first seen and a
// `tool_call_update` whenever its view changes, and the context use as `usage_update`. Shown a
// settled Turn once, it yields the whole Turn: that is how a loaded Session's history replays.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { PromptPart, Turn } from "../../clients/index.js";
import { toolCall } from "./tool-calls.js";

export class TurnProjector {
  /** Characters of each text / reasoning / refusal part already sent. */
  private readonly sent = new Map<string, number>();
  /** The last view of each tool part sent (JSON), by part id. */
  private readonly tools = new Map<string, string>();
  private usage: string | undefined;

  constructor(private readonly workdir: string) {}

  updates(turn: Turn): acp.SessionUpdate[] {
    const updates: acp.SessionUpdate[] = [];
    for (const part of turn.parts) {
      if (part.type === "text" || part.type === "refusal" || part.type === "reasoning") {
        const done = this.sent.get(part.id) ?? 0;
        if (part.text.length <= done) continue;
        this.sent.set(part.id, part.text.length);
        const content: acp.ContentBlock = { type: "text", text: part.text.slice(done) };
        updates.push({ sessionUpdate: part.type === "reasoning" ? "agent_thought_chunk" : "agent_message_chunk", content, messageId: part.id });
      } else if (part.type === "tool") {
        const view = toolCall(part, this.workdir);
        const json = JSON.stringify(view);
        const previous = this.tools.get(part.id);
        if (previous === json) continue;
        this.tools.set(part.id, json);
        updates.push(previous === undefined ? { sessionUpdate: "tool_call", ...view } : { sessionUpdate: "tool_call_update", ...view });
      }
    }
    const use = turn.contextUse;
    if (use !== undefined) {
      const usage = `${use.usedUnits}/${use.contextUnits}`;
      if (usage !== this.usage) {
        this.usage = usage;
        updates.push({ sessionUpdate: "usage_update", used: use.usedUnits, size: use.contextUnits });
      }
    }
    return updates;
  }
}

/** The user's prompt of a Turn as `user_message_chunk` updates (history replay). */
export function promptUpdates(prompt: readonly PromptPart[], messageId: string): acp.SessionUpdate[] {
  const updates: acp.SessionUpdate[] = [];
  for (const part of prompt) {
    let content: acp.ContentBlock | undefined;
    if (part.type === "text") content = { type: "text", text: part.text };
    else if (part.type === "image") {
      content =
        part.source.type === "base64"
          ? { type: "image", data: part.source.data, mimeType: part.source.mimeType }
          : { type: "resource_link", uri: part.source.url, name: part.source.url };
    }
    if (content) updates.push({ sessionUpdate: "user_message_chunk", content, messageId });
  }
  return updates;
}

/** ACP's stop reason for a settled Turn; undefined when it failed otherwise (the prompt answers an error). */
export function stopReason(turn: Turn): acp.StopReason | undefined {
  const outcome = turn.outcome;
  switch (outcome?.kind) {
    case "completed":
      return turn.parts.some((part) => part.type === "refusal") ? "refusal" : "end_turn";
    case "cancelled":
      return "cancelled";
    case "limit_reached":
      return outcome.limit.name === "model_context" ? "max_tokens" : "max_turn_requests";
    case "failed":
      // A rejected (or configured-denied) call ends the Turn; the failed tool call shows why.
      return outcome.fault.code === "tool_denied" ? "end_turn" : undefined;
    default:
      return undefined;
  }
}

/** The Turn's token counts in ACP's shape (finite counts only). */
export function promptUsage(turn: Turn): acp.Usage | undefined {
  const usage = turn.usage;
  if (!usage) return undefined;
  const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
  const input = count(usage.promptTokens);
  const output = count(usage.completionTokens);
  const total = count(usage.totalTokens);
  if (input === undefined || output === undefined || total === undefined) return undefined;
  const thought = count(usage.reasoningCompletionTokens);
  const cached = count(usage.cachedPromptTokens);
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: total,
    ...(thought !== undefined ? { thoughtTokens: thought } : {}),
    ...(cached !== undefined ? { cachedReadTokens: cached } : {}),
  };
}

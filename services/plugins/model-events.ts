// A plugin model's event stream, checked and lowered to the host's `ModelStreamEvent`s
// (`PluginModelEvent` rules, plugin/model.ts): `ResponseStarted` first and once; each new output
// takes the next index from 0; deltas repeat their output's id and type; a completion matches its
// deltas; every output completes before `Usage` (at most once) and `ResponseFinished` (last,
// `tool-calls` exactly when a tool call completed). Outputs may interleave: the one at the next
// index to emit streams live, later ones wait and follow in index order. Any violation is a
// `MalformedModelStream`. And the reverse, for `delegate`: a sibling's events as plugin events.
import type { PluginModelEvent } from "../../plugin/index.js";
import type { FinishReason, ModelStreamEvent, ModelTool } from "../providers/index.js";
import { isRecord, jsonProblem } from "./checks.js";

export class MalformedModelStream extends Error {}

type Kind = "text" | "reasoning" | "refusal" | "tool";

interface Output {
  readonly kind: Kind;
  readonly id: string;
  readonly name?: string;
  text: string;
  completed: boolean;
  /** Lowered events not emitted yet (the output waits for earlier ones). */
  pending: ModelStreamEvent[];
}

const FINISH: Readonly<Record<string, FinishReason>> = { stop: "stop", "tool-calls": "tool_calls", length: "length", "content-filter": "content_filter", other: "stop" };
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";
const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** Checks one plugin model response, event by event. */
export class PluginEventChecker {
  private started = false;
  private finished = false;
  private usage = false;
  private toolCalls = 0;
  private readonly outputs: Output[] = [];
  private emitAt = 0;

  constructor(
    private readonly tools: readonly ModelTool[],
    private readonly takesTools: boolean,
  ) {}

  get responseStarted(): boolean {
    return this.started;
  }

  /** The lowered events `event` releases, in order; throws `MalformedModelStream`. */
  accept(raw: unknown): ModelStreamEvent[] {
    const bad = (why: string): never => {
      throw new MalformedModelStream(why);
    };
    if (!isRecord(raw) || typeof raw["_tag"] !== "string") return bad("an event is not a tagged object");
    const event = raw as PluginModelEvent;
    if (this.finished) return bad(`${event._tag} after ResponseFinished`);
    if (event._tag === "ResponseStarted") {
      if (this.started) return bad("ResponseStarted twice");
      this.started = true;
      return [];
    }
    if (!this.started) return bad(`${event._tag} before ResponseStarted`);
    switch (event._tag) {
      case "ContentDelta":
      case "ContentCompleted":
      case "ToolCallInputDelta":
      case "ToolCallCompleted":
        if (this.usage) return bad(`${event._tag} after Usage`);
        return this.output(event, bad);
      case "Usage": {
        if (this.usage) return bad("Usage twice");
        if (this.outputs.some((output) => !output.completed)) return bad("Usage before every output completed");
        const u: Record<string, unknown> = isRecord(event.usage) ? event.usage : {};
        const fields = ["freshInputUnits", "cacheReadInputUnits", "cacheWriteInputUnits", "inputUnits", "outputUnits", "reasoningUnits", "totalUnits"] as const;
        if (!fields.every((field) => count(u[field]))) return bad("Usage needs non-negative integer units");
        const n = u as Record<(typeof fields)[number], number>;
        if (n.inputUnits !== n.freshInputUnits + n.cacheReadInputUnits + n.cacheWriteInputUnits || n.reasoningUnits > n.outputUnits || n.totalUnits !== n.inputUnits + n.outputUnits) return bad("Usage totals do not agree");
        this.usage = true;
        return [
          {
            type: "usage",
            promptTokens: n.inputUnits,
            completionTokens: n.outputUnits,
            ...(n.cacheReadInputUnits > 0 ? { cachedPromptTokens: n.cacheReadInputUnits } : {}),
            ...(n.cacheWriteInputUnits > 0 ? { cacheWriteTokens: n.cacheWriteInputUnits } : {}),
            ...(n.reasoningUnits > 0 ? { reasoningTokens: n.reasoningUnits } : {}),
          },
        ];
      }
      case "ResponseFinished": {
        const reason = typeof event.reason === "string" && Object.hasOwn(FINISH, event.reason) ? FINISH[event.reason]! : bad("ResponseFinished needs a known reason");
        if (this.outputs.some((output) => !output.completed)) return bad("ResponseFinished before every output completed");
        if ((event.reason === "tool-calls") !== this.toolCalls > 0) return bad("the reason is tool-calls exactly when a tool call completed");
        this.finished = true;
        return [{ type: "finish", reason }];
      }
      default:
        return bad(`unknown event ${JSON.stringify((event as { _tag: string })._tag).slice(0, 64)}`);
    }
  }

  /** Throws unless the response finished. */
  end(): void {
    if (!this.finished) throw new MalformedModelStream(this.started ? "the stream ended without ResponseFinished" : "the stream ended without ResponseStarted");
  }

  private output(event: Extract<PluginModelEvent, { index: number }>, bad: (why: string) => never): ModelStreamEvent[] {
    if (!Number.isSafeInteger(event.index) || event.index < 0) return bad("an output index must be a non-negative integer");
    const existing = this.outputs[event.index];
    if (existing === undefined && event.index !== this.outputs.length) return bad(`output ${event.index} skips index ${this.outputs.length}`);
    if (existing?.completed) return bad(`output ${event.index} already completed`);
    let output: Output;
    let lowered: ModelStreamEvent[] = [];
    if (event._tag === "ContentDelta" || event._tag === "ContentCompleted") {
      if (!nonEmpty(event.contentId)) return bad("contentId must be non-empty");
      const kind: Kind | undefined =
        event._tag === "ContentDelta"
          ? (["text", "reasoning", "refusal"] as const).find((type) => type === event.contentType)
          : isRecord(event.content)
            ? ({ text: "text", reasoning: "reasoning", "reasoning-boundary": "reasoning", refusal: "refusal" } as Record<string, Kind>)[String(event.content["type"])]
            : undefined;
      if (kind === undefined) return bad("unknown content type");
      output = existing ?? this.open(kind, event.contentId, undefined, bad);
      if (output.kind !== kind || output.id !== event.contentId) return bad(`output ${event.index} changed its id or type`);
      if (event._tag === "ContentDelta") {
        if (!nonEmpty(event.delta)) return bad("a delta must be non-empty text");
        output.text += event.delta;
        lowered = [{ type: `${kind as "text" | "reasoning" | "refusal"}.delta`, text: event.delta }];
      } else {
        const content = event.content as { type: string; text?: unknown };
        const text = content.type === "reasoning-boundary" ? "" : content.text;
        if (content.type === "reasoning-boundary" && existing !== undefined) return bad("a reasoning-boundary cannot complete deltas");
        if (content.type !== "reasoning-boundary" && !nonEmpty(text)) return bad("completed content needs non-empty text");
        if (existing !== undefined && text !== output.text) return bad(`output ${event.index}'s completion does not equal its deltas`);
        if (existing === undefined && nonEmpty(text)) lowered = [{ type: `${kind as "text" | "reasoning" | "refusal"}.delta`, text }];
        if (kind === "reasoning") lowered.push({ type: "reasoning.end" });
        output.completed = true;
      }
    } else {
      if (!this.takesTools) return bad("the model does not take tools");
      if (event._tag === "ToolCallInputDelta") {
        if (!nonEmpty(event.toolCallId) || !nonEmpty(event.toolName) || !nonEmpty(event.delta)) return bad("a tool call delta needs a toolCallId, toolName and delta");
        output = existing ?? this.open("tool", event.toolCallId, event.toolName, bad);
        if (output.kind !== "tool" || output.id !== event.toolCallId || output.name !== event.toolName) return bad(`output ${event.index} changed its id or tool`);
        output.text += event.delta;
      } else {
        const call: Record<string, unknown> = isRecord(event.toolCall) ? event.toolCall : {};
        if (call["type"] !== "tool-call" || !nonEmpty(call["id"]) || !nonEmpty(call["name"]) || !isRecord(call["input"]) || jsonProblem(call["input"]) !== undefined) return bad("toolCall must be { type: tool-call, id, name, input: a JSON object }");
        output = existing ?? this.open("tool", call["id"] as string, call["name"] as string, bad);
        if (output.kind !== "tool" || output.id !== call["id"] || output.name !== call["name"]) return bad(`output ${event.index} changed its id or tool`);
        if (existing !== undefined) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(output.text);
          } catch {
            return bad(`output ${event.index}'s input deltas are not JSON`);
          }
          if (JSON.stringify(parsed) !== JSON.stringify(call["input"])) return bad(`output ${event.index}'s input does not equal its deltas`);
        }
        if (!this.tools.some((tool) => tool.name === call["name"])) return bad(`tool ${JSON.stringify(call["name"]).slice(0, 140)} was not offered`);
        output.completed = true;
        this.toolCalls += 1;
        lowered = [{ type: "tool_call", id: output.id, name: output.name as string, arguments: JSON.stringify(call["input"]) }];
      }
    }
    return this.release(event.index, lowered);
  }

  private open(kind: Kind, id: string, name: string | undefined, bad: (why: string) => never): Output {
    if (this.outputs.some((output) => output.id === id)) return bad(`output id ${JSON.stringify(id).slice(0, 140)} is used twice`);
    const output: Output = { kind, id, ...(name !== undefined ? { name } : {}), text: "", completed: false, pending: [] };
    this.outputs.push(output);
    return output;
  }

  /** Emits what output `index` produced now when it is the one streaming, else holds it; then releases completed ones in order. */
  private release(index: number, lowered: ModelStreamEvent[]): ModelStreamEvent[] {
    const output = this.outputs[index]!;
    if (index !== this.emitAt) {
      output.pending.push(...lowered);
      return [];
    }
    const out = [...lowered];
    while (this.outputs[this.emitAt]?.completed) {
      this.emitAt += 1;
      const next = this.outputs[this.emitAt];
      if (next) out.push(...next.pending.splice(0));
    }
    return out;
  }
}

/** A sibling's events as plugin model events (one complete, valid sequence). */
export async function* pluginEventsOf(events: AsyncIterable<ModelStreamEvent>): AsyncGenerator<PluginModelEvent> {
  yield { _tag: "ResponseStarted" };
  let index = -1;
  let open: { kind: "text" | "reasoning" | "refusal"; id: string; text: string } | undefined;
  let tools = 0;
  let finish: FinishReason = "stop";
  const close = function* (): Generator<PluginModelEvent> {
    if (!open) return;
    const { kind, id, text } = open;
    open = undefined;
    yield { _tag: "ContentCompleted", index, contentId: id, content: kind === "reasoning" && text === "" ? { type: "reasoning-boundary" } : { type: kind, text } };
  };
  let usage: PluginModelEvent | undefined;
  for await (const event of events) {
    if (event.type === "text.delta" || event.type === "reasoning.delta" || event.type === "refusal.delta") {
      const kind = event.type.slice(0, -".delta".length) as "text" | "reasoning" | "refusal";
      if (event.text === "") continue;
      if (open?.kind !== kind) {
        yield* close();
        index += 1;
        open = { kind, id: `content_${index}`, text: "" };
      }
      open.text += event.text;
      yield { _tag: "ContentDelta", index, contentId: open.id, contentType: kind, delta: event.text };
    } else if (event.type === "reasoning.end") {
      if (open?.kind === "reasoning") yield* close();
      else {
        yield* close();
        index += 1;
        yield { _tag: "ContentCompleted", index, contentId: `content_${index}`, content: { type: "reasoning-boundary" } };
      }
    } else if (event.type === "tool_call") {
      yield* close();
      index += 1;
      tools += 1;
      let input: unknown;
      try {
        input = JSON.parse(event.arguments);
      } catch {
        input = {};
      }
      yield { _tag: "ToolCallCompleted", index, toolCall: { type: "tool-call", id: event.id, name: event.name, input: isRecord(input) ? (input as never) : {} } };
    } else if (event.type === "usage") {
      const cached = event.cachedPromptTokens ?? 0;
      const written = event.cacheWriteTokens ?? 0;
      const fresh = Math.max(0, event.promptTokens - cached - written);
      usage = {
        _tag: "Usage",
        usage: {
          freshInputUnits: fresh,
          cacheReadInputUnits: cached,
          cacheWriteInputUnits: written,
          inputUnits: fresh + cached + written,
          outputUnits: event.completionTokens,
          reasoningUnits: Math.min(event.reasoningTokens ?? 0, event.completionTokens),
          totalUnits: fresh + cached + written + event.completionTokens,
        },
      };
    } else if (event.type === "finish") {
      finish = event.reason;
    }
  }
  yield* close();
  if (usage) yield usage;
  const reason = tools > 0 ? "tool-calls" : finish === "length" ? "length" : finish === "content_filter" ? "content-filter" : finish === "refusal" ? "other" : "stop";
  yield { _tag: "ResponseFinished", reason };
}

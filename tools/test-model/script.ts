// The scripted-response vocabulary of the test model, and the protocol-neutral helpers
// every renderer shares: validation, default stop reason and usage, text and argument
// splitting, deterministic ids.

/** One model response: its events are rendered in whichever protocol the request used. */
export interface ScriptedTurn {
  events: ModelEvent[];
  usage?: ScriptedUsage;
  /** Default: "tool_calls" if any tool_call event, else "refusal" if any refusal event, else "stop". */
  stop?: StopKind;
}

/**
 * Token counts in OpenAI's sense: `promptTokens` includes `cachedPromptTokens`, and
 * `completionTokens` includes `reasoningTokens`. Each missing count is estimated (≈ 4 characters
 * a token) from the request body and the scripted output.
 */
export interface ScriptedUsage {
  promptTokens?: number;
  completionTokens?: number;
  cachedPromptTokens?: number;
  reasoningTokens?: number;
}

export type StopKind = "stop" | "tool_calls" | "length" | "refusal";

export type ModelEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "refusal"; text: string }
  /** `arguments`: an object is sent as JSON, a string is sent raw (it may be invalid JSON on purpose). */
  | { type: "tool_call"; id?: string; name: string; arguments: unknown }
  /** Pause mid-stream (slow streams). In a non-streaming answer, delays the whole answer. */
  | { type: "delay"; ms: number }
  /** Destroy the socket: before any headers if it is the first event, else mid-stream. */
  | { type: "drop" }
  /**
   * A failure the provider reports inside the stream (`code` is the error type/code, `message`
   * its text); nothing after it is sent. Non-streaming: an HTTP 500 with that code and message.
   */
  | { type: "error"; code: string; message: string };

export type ScriptedError = { error: { status: number; body?: unknown; headers?: Record<string, string> } };
export type ScriptedHang = { hang: true };
export type ScriptedResponse = ScriptedTurn | ScriptedError | ScriptedHang;

export type Protocol = "chat" | "responses" | "messages";

export interface RecordedRequest {
  protocol: Protocol;
  path: string;
  /**
   * Lower-case names; repeated headers joined with ", ". Credential headers (`authorization`,
   * `x-api-key`, `api-key`) hold `sha256:<hex>` of the value instead (`Bearer sha256:<hex>`).
   */
  headers: Record<string, string>;
  /** `sha256:<hex>` of the credential the request carried (bearer token or key), never the credential. */
  credentialSha256?: string;
  /** The parsed JSON body (the raw text if it was not JSON). */
  body: any;
  receivedAt: number;
}

export function isError(response: ScriptedResponse): response is ScriptedError {
  return typeof response === "object" && response !== null && "error" in response;
}

export function isHang(response: ScriptedResponse): response is ScriptedHang {
  return typeof response === "object" && response !== null && "hang" in response;
}

const STOP_KINDS: readonly string[] = ["stop", "tool_calls", "length", "refusal"];

/** Why `value` is not a ScriptedResponse, or null when it is one. */
export function scriptProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "a scripted response must be an object";
  const record = value as Record<string, unknown>;
  if ("hang" in record) return record["hang"] === true ? null : "`hang` must be true";
  if ("error" in record) {
    const error = record["error"] as Record<string, unknown> | null;
    if (typeof error !== "object" || error === null) return "`error` must be an object";
    const status = error["status"];
    if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599) {
      return "`error.status` must be an HTTP error status (400–599)";
    }
    const headers = error["headers"];
    if (headers !== undefined) {
      if (typeof headers !== "object" || headers === null) return "`error.headers` must be an object of strings";
      for (const [name, header] of Object.entries(headers)) {
        if (typeof header !== "string") return `\`error.headers.${name}\` must be a string`;
      }
    }
    return null;
  }
  const events = record["events"];
  if (!Array.isArray(events)) return "a scripted turn needs an `events` array (or use `error` / `hang`)";
  for (const [index, event] of events.entries()) {
    const problem = eventProblem(event);
    if (problem) return `events[${index}]: ${problem}`;
  }
  const stop = record["stop"];
  if (stop !== undefined && (typeof stop !== "string" || !STOP_KINDS.includes(stop))) {
    return `\`stop\` must be one of ${STOP_KINDS.join(", ")}`;
  }
  const usage = record["usage"];
  if (usage !== undefined) {
    if (typeof usage !== "object" || usage === null) return "`usage` must be an object";
    for (const [name, count] of Object.entries(usage)) {
      if (typeof count !== "number" || !Number.isInteger(count) || count < 0) return `\`usage.${name}\` must be a non-negative integer`;
    }
  }
  return null;
}

function eventProblem(event: unknown): string | null {
  if (typeof event !== "object" || event === null) return "an event must be an object";
  const record = event as Record<string, unknown>;
  switch (record["type"]) {
    case "text":
    case "reasoning":
    case "refusal":
      return typeof record["text"] === "string" ? null : "`text` must be a string";
    case "tool_call":
      if (typeof record["name"] !== "string" || record["name"] === "") return "a tool_call needs a `name`";
      if (record["id"] !== undefined && typeof record["id"] !== "string") return "`id` must be a string";
      return null;
    case "delay":
      return typeof record["ms"] === "number" && record["ms"] >= 0 ? null : "`ms` must be a non-negative number";
    case "drop":
      return null;
    case "error":
      if (typeof record["code"] !== "string" || record["code"] === "") return "an error needs a `code`";
      return typeof record["message"] === "string" ? null : "`message` must be a string";
    default:
      return `unknown event type ${JSON.stringify(record["type"])}`;
  }
}

/** A scripted turn with its stop reason and usage settled. */
export interface ResolvedTurn {
  events: ModelEvent[];
  stop: StopKind;
  usage: Required<ScriptedUsage>;
}

export function resolveTurn(turn: ScriptedTurn, request: RecordedRequest): ResolvedTurn {
  const events = turn.events;
  const stop =
    turn.stop ??
    (events.some((event) => event.type === "tool_call")
      ? "tool_calls"
      : events.some((event) => event.type === "refusal")
        ? "refusal"
        : "stop");
  let outputChars = 0;
  let reasoningChars = 0;
  for (const event of events) {
    if (event.type === "text" || event.type === "refusal") outputChars += event.text.length;
    else if (event.type === "reasoning") reasoningChars += event.text.length;
    else if (event.type === "tool_call") outputChars += event.name.length + argumentsJson(event.arguments).length;
  }
  const given = turn.usage ?? {};
  const reasoningTokens = given.reasoningTokens ?? Math.ceil(reasoningChars / 4);
  const completionTokens = given.completionTokens ?? Math.max(1, Math.ceil(outputChars / 4) + reasoningTokens);
  const cachedPromptTokens = given.cachedPromptTokens ?? 0;
  const bodyChars = typeof request.body === "string" ? request.body.length : JSON.stringify(request.body ?? "").length;
  const promptTokens = given.promptTokens ?? Math.max(1, Math.ceil(bodyChars / 4), cachedPromptTokens);
  return { events, stop, usage: { promptTokens, completionTokens, cachedPromptTokens, reasoningTokens } };
}

/** Tool-call arguments as sent on the wire: a string as is, anything else as JSON. */
export function argumentsJson(args: unknown): string {
  if (typeof args === "string") return args;
  return JSON.stringify(args ?? {});
}

/** Tool-call arguments as a parsed value (for the non-streaming Anthropic `input`). */
export function argumentsValue(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Split text into word-sized deltas ("Hello brave world" → "Hello ", "brave ", "world"). */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** Split a JSON string into (up to) three pieces so arguments always arrive over several chunks. */
export function splitArguments(json: string): string[] {
  if (json.length <= 1) return [json];
  const size = Math.max(1, Math.ceil(json.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < json.length; at += size) pieces.push(json.slice(at, at + size));
  return pieces;
}

/** The text content kinds: adjacent events of one kind merge into one block / item / part. */
export type ContentKind = "text" | "reasoning" | "refusal";

export type Segment =
  | { kind: ContentKind; text: string }
  | { kind: "tool_call"; id: string | undefined; name: string; arguments: unknown };

/** The turn's content as blocks, for non-streaming answers (delays ignored, nothing after a drop). */
export function segmentsOf(events: readonly ModelEvent[]): Segment[] {
  const segments: Segment[] = [];
  for (const event of events) {
    if (event.type === "drop" || event.type === "error") break;
    if (event.type === "delay") continue;
    if (event.type === "tool_call") {
      segments.push({ kind: "tool_call", id: event.id, name: event.name, arguments: event.arguments });
      continue;
    }
    const last = segments.at(-1);
    if (last && last.kind === event.type) last.text += event.text;
    else segments.push({ kind: event.type, text: event.text });
  }
  return segments;
}

/** Deterministic ids, unique within one test model: `call_000001`, `msg_000002`, … */
export class IdSource {
  private counter = 0;
  next(prefix: string): string {
    this.counter += 1;
    return `${prefix}_${String(this.counter).padStart(6, "0")}`;
  }
}

export interface RenderOptions {
  /** Where chat-completions reasoning goes: `reasoning_content` (DeepSeek, vLLM…) or `reasoning` (OpenRouter…). */
  chatReasoningField: "reasoning_content" | "reasoning";
  /** Responses reasoning as summary parts (`reasoning_summary_text`) or as content (`reasoning_text`). */
  responsesReasoning: "summary" | "content";
}

export interface RenderContext {
  request: RecordedRequest;
  ids: IdSource;
  /** Milliseconds since the epoch. */
  now: number;
  options: RenderOptions;
}

/** What a streaming renderer produces: SSE text to write, a pause, or a cut connection. */
export type Frame = { kind: "data"; data: string } | { kind: "delay"; ms: number } | { kind: "drop" };

export function modelOf(request: RecordedRequest): string {
  const model = request.body?.model;
  return typeof model === "string" && model !== "" ? model : "test-model";
}

/** `data: …` (with an optional `event:` line), one SSE message. */
export function sse(data: unknown, event?: string): Frame {
  const line = `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  return { kind: "data", data: event ? `event: ${event}\n${line}` : line };
}

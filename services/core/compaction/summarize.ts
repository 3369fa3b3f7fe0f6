// The summarizer: renders the history to compact as text within the model's input budget, asks
// the compaction's model (through the gateway, with the policy's attempts and deadlines) for a
// JSON summary, and parses the answer robustly. The history travels as one text transcript, not
// as replayed messages: a summary request carries no tools, and providers refuse tool calls
// and results without them.
import type { CompactionSummary, TurnPolicy, TurnUsage } from "../../../generated/client/types.gen.js";
import { isProviderFailure, toolResultText, type ModelMessage } from "../../providers/index.js";
import type { ModelGateway } from "../turns/gateway.js";
import { StopSignal, fault, finite, limitReached } from "../turns/stop.js";
import { summaryText, type HistoryItem } from "../history/assemble.js";

export const SUMMARY_SYSTEM = [
  "You compact the history of a conversation between a user and an AI coding assistant, so that the assistant can continue the work without the full history.",
  'Answer with exactly one JSON object and nothing else: {"version":1,"overview":string,"keyFacts":string[],"decisions":string[],"openTasks":string[]}.',
  "overview: what happened and where things stand now. keyFacts: the concrete facts a continuation needs (files, names, values, commands, errors). decisions: what was decided, and why. openTasks: what remains to be done.",
  "Keep everything a continuation needs; leave out pleasantries and repetition. If an earlier summary is given, fold it in.",
].join("\n");

/** Characters per estimated model unit (the estimator the context check uses). */
export const CHARS_PER_UNIT = 4;
export const ESTIMATOR = "utf16-chars/4";

/** The estimated model units of messages (as the Turn's context check estimates them). */
export const estimateUnits = (messages: readonly ModelMessage[]): number => Math.ceil(JSON.stringify(messages).length / CHARS_PER_UNIT);

/** Longest rendering of one tool result or message text: a summary needs its gist, not its bulk. */
const MAX_PIECE = 8_000;

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.max(0, Math.floor((max - 40) / 2));
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters left out …]\n${text.slice(text.length - half)}`;
}

function renderMessage(message: ModelMessage): string {
  if (message.role === "tool") return `[${message.toolName} ${message.isError ? "failed" : "result"}] ${clip(toolResultText(message.result), MAX_PIECE)}`;
  const lines: string[] = [];
  for (const part of message.content) {
    if (part.type === "text") lines.push(`[${message.role}] ${clip(part.text, MAX_PIECE)}`);
    else if (part.type === "image") lines.push(`[${message.role}] [image]`);
    else if (part.type === "refusal") lines.push(`[assistant refused] ${clip(part.text, MAX_PIECE)}`);
    else if (part.type === "tool_call") lines.push(`[assistant called ${part.name}] ${clip(part.arguments, MAX_PIECE)}`);
  }
  return lines.join("\n");
}

export function renderItem(item: HistoryItem): string {
  const head = item.kind === "entry" ? `## Conversation entry (history revision ${item.revision})` : `## Turn (history revision ${item.revision})`;
  return [head, ...item.messages.map(renderMessage).filter((line) => line !== "")].join("\n");
}

export interface SummarySource {
  /** The user message text of the summary request. */
  readonly text: string;
  /** The items it covers, a prefix of the given ones (at least one). */
  readonly included: readonly HistoryItem[];
  /** Messages summarized (the earlier summary counts as one). */
  readonly messageCount: number;
}

/**
 * The request text for an earlier summary plus `items`, within `budgetChars`: the longest prefix
 * of items that fits (always at least the first, cut to fit), so one oversized history compacts
 * in steps instead of failing.
 */
export function summarySource(previous: CompactionSummary | undefined, items: readonly HistoryItem[], budgetChars: number): SummarySource {
  const opening = previous ? `The earlier summary:\n${summaryText(previous)}\n\n` : "";
  const closing = "\n\nAnswer with the JSON object only.";
  let room = Math.max(1_000, budgetChars - opening.length - closing.length - 64);
  const rendered: string[] = [];
  const included: HistoryItem[] = [];
  for (const item of items) {
    const text = renderItem(item);
    if (text.length + 2 > room) {
      if (included.length === 0) {
        rendered.push(clip(text, room));
        included.push(item);
      }
      break;
    }
    rendered.push(text);
    included.push(item);
    room -= text.length + 2;
  }
  const messageCount = (previous ? 1 : 0) + included.reduce((count, item) => count + item.messages.length, 0);
  return { text: `${opening}The conversation to summarize:\n\n${rendered.join("\n\n")}${closing}`, included, messageCount };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).filter((item) => item.trim() !== "") : typeof value === "string" && value.trim() !== "" ? [value] : [];

/** The JSON object in a model answer: fenced or bare, possibly with prose around it. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
  for (const candidate of [fenced, text]) {
    if (candidate === undefined) continue;
    const start = candidate.indexOf("{");
    const end = candidate.lastIndexOf("}");
    if (start < 0 || end <= start) continue;
    try {
      const parsed = JSON.parse(candidate.slice(start, end + 1)) as unknown;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: try the next candidate, then fall back to the text itself.
    }
  }
  return undefined;
}

/**
 * The summary in a model's answer: the JSON object it was asked for (also inside a code fence or
 * under a `summary` key; missing lists read as empty), or — when the answer holds no usable
 * object — the answer's text as the overview. Undefined only for an empty answer.
 */
export function parseSummary(text: string): CompactionSummary | undefined {
  const found = jsonObject(text);
  const object = found && typeof found["summary"] === "object" && found["summary"] !== null && !("overview" in found) ? (found["summary"] as Record<string, unknown>) : found;
  const overview = typeof object?.["overview"] === "string" ? object["overview"].trim() : "";
  const summary: CompactionSummary = {
    version: 1,
    overview: (overview !== "" ? overview : object ? "" : text.trim()).slice(0, 262_144),
    keyFacts: strings(object?.["keyFacts"]),
    decisions: strings(object?.["decisions"]),
    openTasks: strings(object?.["openTasks"]),
  };
  if (summary.overview === "" && summary.keyFacts.length + summary.decisions.length + summary.openTasks.length === 0) return undefined;
  return summary;
}

const sum = (a: number | undefined, b: number | undefined): number => (a ?? 0) + (b ?? 0);

/** Adds one attempt's usage to a running total (the contract's TurnUsage: zero cached/reasoning counts absent). */
export function addUsage(total: TurnUsage | undefined, attempt: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number; reasoningTokens?: number }): TurnUsage {
  const cached = sum(total?.cachedPromptTokens as number | undefined, attempt.cachedPromptTokens);
  const reasoning = sum(total?.reasoningCompletionTokens as number | undefined, attempt.reasoningTokens);
  return {
    promptTokens: sum(total?.promptTokens as number | undefined, attempt.promptTokens),
    completionTokens: sum(total?.completionTokens as number | undefined, attempt.completionTokens),
    totalTokens: sum(total?.totalTokens as number | undefined, attempt.promptTokens + attempt.completionTokens),
    ...(cached ? { cachedPromptTokens: cached } : {}),
    ...(reasoning ? { reasoningCompletionTokens: reasoning } : {}),
  };
}

export interface SummaryCall {
  readonly gateway: ModelGateway;
  readonly model: string;
  readonly policy: TurnPolicy;
  readonly text: string;
  readonly signal: AbortSignal;
  /** The work the request serves (a scoped credential resolver is told it). */
  readonly scope?: { readonly sessionId: string; readonly compactionId: string };
  /** Each attempt's usage, as it arrives. */
  readonly onUsage: (attempt: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number; reasoningTokens?: number }) => void;
}

/**
 * Asks the model for the summary: only attempts the provider rejected before any output are
 * retried, up to the policy's attempts, each under its attempt deadline. Failures throw a
 * StopSignal (a limit or a fault); an abort rethrows the signal's reason.
 */
export async function requestSummary(call: SummaryCall): Promise<string> {
  const provider = call.policy.provider;
  const maxAttempts = finite(provider.maxAttempts) ?? 3;
  const attemptTimeout = finite(provider.attemptTimeoutMs);
  for (let attempt = 1; ; attempt++) {
    if (call.signal.aborted) throw call.signal.reason;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(call.signal.reason);
    call.signal.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = attemptTimeout !== undefined ? setTimeout(() => ((timedOut = true), controller.abort(new Error("attempt timeout"))), attemptTimeout) : undefined;
    let text = "";
    let output = false;
    try {
      const messages: ModelMessage[] = [{ role: "user", content: [{ type: "text", text: call.text }] }];
      for await (const event of call.gateway.stream({ model: call.model, system: SUMMARY_SYSTEM, messages, tools: [], signal: controller.signal, ...(call.scope ?? {}), ...(attemptTimeout !== undefined ? { timeoutMs: attemptTimeout } : {}) })) {
        if (controller.signal.aborted) break;
        if (event.type === "usage") call.onUsage(event);
        else if (event.type !== "finish") output = true;
        if (event.type === "text.delta") text += event.text;
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      return text;
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      // The gateway's own stop (a denied credential) is the compaction's.
      if (error instanceof StopSignal) throw error;
      const exhausted = attempt >= maxAttempts;
      if (timedOut) {
        if (output || exhausted) throw limitReached("provider_attempt_timeout", provider.attemptTimeoutMs, attemptTimeout!, "milliseconds", "A compaction request attempt timed out");
        continue;
      }
      const failure = isProviderFailure(error) ? error : undefined;
      if (!failure || !failure.retryable || !failure.beforeOutput || output) {
        throw new StopSignal({ kind: "failed", fault: fault(`provider_${failure?.kind ?? "error"}`, failure?.message ?? "The compaction request failed", failure?.providerCode) });
      }
      if (exhausted) throw limitReached("provider_attempts", provider.maxAttempts, maxAttempts, "attempts", `The compaction request failed ${attempt} time(s): ${failure.message}`);
    } finally {
      if (timer) clearTimeout(timer);
      call.signal.removeEventListener("abort", onAbort);
    }
  }
}

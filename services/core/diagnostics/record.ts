// What the Turn runner records for `diagnostics` and `context`: each failed model request attempt
// (a model-step failure, with the safe wording the provider room gives it — never a provider
// body) and each prepared Main request, grouped by message role and tool schema with the same
// estimate the context check uses (UTF-16 characters / 4). A prepared request rides the Turn's
// next durable change (streamed content, a tool call or the settlement) inside that change's own
// UPDATE (a trigger records it in `session_context`), so it costs no statement and no
// transaction; a failed attempt commits on its own (a failure never fails the Turn further: its
// storage error is dropped).
import { sharedLeadingMessages, type ModelMessage, type ModelTool } from "../../providers/index.js";
import { diagnostics as store, type StorageHandle, type StorageTransaction } from "../../storage/index.js";

/** The estimator `fitContext` uses, named as the model_context limit names it. */
export const ESTIMATOR = "utf16-chars/4";
const estimate = (characters: number): number => Math.ceil(characters / 4);

export interface ContextGroupRecord {
  readonly role: "system" | "user" | "assistant" | "tool";
  readonly messages: number;
  readonly characters: number;
  readonly estimatedTokens: number;
}

export interface ContextToolRecord {
  readonly name: string;
  readonly characters: number;
  readonly estimatedTokens: number;
}

export interface ContextReportRecord {
  readonly groups: readonly ContextGroupRecord[];
  readonly tools: readonly ContextToolRecord[];
  readonly estimatedInputTokens: number;
  readonly contextUnits: number | null;
}

const jsonLengths = new WeakMap<object, number>();

/**
 * `JSON.stringify(value).length`, remembered per object: a request's messages and tools are never
 * changed once built, and a Session's history messages are the same objects Turn after Turn, so
 * each is serialized once for the context check and the context report together.
 */
export function jsonLength(value: object): number {
  let length = jsonLengths.get(value);
  if (length === undefined) {
    length = JSON.stringify(value).length;
    jsonLengths.set(value, length);
  }
  return length;
}

/** `JSON.stringify(values).length`, from the elements' lengths (brackets and commas added). */
export function arrayJsonLength(values: readonly object[]): number {
  let total = values.length > 0 ? values.length + 1 : 2;
  for (const value of values) total += jsonLength(value);
  return total;
}

type MessageRole = ModelMessage["role"];

/** A history's messages counted by role: how many, and their JSON length. */
export interface MessageTotals {
  readonly messages: readonly ModelMessage[];
  readonly characters: number;
  readonly byRole: Readonly<Record<MessageRole, { readonly messages: number; readonly characters: number }>>;
}

/**
 * The totals of a Session's history, by its first message: each request repeats most of the last
 * one's messages (the same objects, in order) and adds a few, so only the new ones are looked up —
 * the context check and the context report otherwise look up every message of a long Session on
 * every request (issue 21 §2). The kept totals are taken back to the longest run of leading
 * messages both share (the last Turn's prompt is another object once read back from its row);
 * `fresh` says how many messages were looked up.
 */
const totalsByFirst = new WeakMap<ModelMessage, MessageTotals>();

export function messageTotals(messages: readonly ModelMessage[]): MessageTotals & { readonly fresh: number } {
  const first = messages[0];
  const kept = first !== undefined ? totalsByFirst.get(first) : undefined;
  const known = kept?.messages ?? [];
  const same = sharedLeadingMessages(known, messages);
  if (kept !== undefined && same === known.length && same === messages.length) return { ...kept, fresh: 0 };
  const base = same > 0 ? kept : undefined;
  let characters = base?.characters ?? 0;
  const byRole = {
    user: { messages: base?.byRole.user.messages ?? 0, characters: base?.byRole.user.characters ?? 0 },
    assistant: { messages: base?.byRole.assistant.messages ?? 0, characters: base?.byRole.assistant.characters ?? 0 },
    tool: { messages: base?.byRole.tool.messages ?? 0, characters: base?.byRole.tool.characters ?? 0 },
  };
  const count = (message: ModelMessage, sign: 1 | -1): void => {
    const length = jsonLength(message) * sign;
    characters += length;
    byRole[message.role].messages += sign;
    byRole[message.role].characters += length;
  };
  // Take the kept totals back to the shared run (those messages' lengths are remembered), then count the rest.
  if (base !== undefined) for (let index = same; index < known.length; index += 1) count(known[index]!, -1);
  const from = base !== undefined ? same : 0;
  for (let index = from; index < messages.length; index += 1) count(messages[index]!, 1);
  const totals: MessageTotals = { messages: messages.slice(), characters, byRole };
  if (first !== undefined) totalsByFirst.set(first, totals);
  return { ...totals, fresh: messages.length - from };
}

/** `arrayJsonLength(messages)` of a history, its repeated leading messages counted once (`messageTotals`). */
export function messagesJsonLength(messages: readonly ModelMessage[]): number {
  return messages.length > 0 ? messages.length + 1 + messageTotals(messages).characters : 2;
}

/** Groups one request by role (system first, then user, assistant, tool) and tool schema. */
export function contextReport(request: { readonly system: string | undefined; readonly messages: readonly ModelMessage[]; readonly tools: readonly ModelTool[] }, contextUnits: number | undefined): ContextReportRecord {
  const groups = new Map<ContextGroupRecord["role"], { messages: number; characters: number }>();
  const add = (role: ContextGroupRecord["role"], characters: number): void => {
    const group = groups.get(role) ?? { messages: 0, characters: 0 };
    group.messages += 1;
    group.characters += characters;
    groups.set(role, group);
  };
  if (request.system !== undefined) add("system", request.system.length);
  const totals = messageTotals(request.messages);
  for (const role of ["user", "assistant", "tool"] as const) {
    const counted = totals.byRole[role];
    if (counted.messages > 0) groups.set(role, { messages: counted.messages, characters: counted.characters });
  }
  const order: ContextGroupRecord["role"][] = ["system", "user", "assistant", "tool"];
  const tools = request.tools.map((tool) => {
    const characters = jsonLength(tool);
    return { name: tool.name, characters, estimatedTokens: estimate(characters) };
  });
  // The same total `fitContext` checks against the window.
  const total = messagesJsonLength(request.messages) + (request.system?.length ?? 0) + arrayJsonLength(request.tools);
  return {
    groups: order.filter((role) => groups.has(role)).map((role) => ({ role, ...groups.get(role)!, estimatedTokens: estimate(groups.get(role)!.characters) })),
    tools,
    estimatedInputTokens: estimate(total),
    contextUnits: contextUnits ?? null,
  };
}

/**
 * A prepared request waiting for the Turn's next change: `taken` once a change took it (its
 * record is serialized when that change writes, so usage reported until then is in it).
 */
export interface StagedRequest {
  readonly record: { readonly sessionId: string; readonly turnId: string; readonly model: string; readonly report: ContextReportRecord; readonly preparedAt: number; reportedInputTokens: number | null };
  taken: boolean;
}

/** Where a Turn's records go: its next durable change (no transaction of their own). */
export interface RecordSink {
  stageWrite(write: (tx: StorageTransaction) => Promise<void>): void;
  /** A prepared request the next change records. */
  stageRequest(request: StagedRequest): void;
}

/** One prepared request's record: inserted by the Turn's next change, its usage set when reported. */
export class PreparedRequest {
  private readonly staged: StagedRequest;

  constructor(
    private readonly sink: RecordSink,
    record: { readonly sessionId: string; readonly turnId: string; readonly model: string; readonly report: ContextReportRecord; readonly preparedAt: number },
  ) {
    this.staged = { record: { ...record, reportedInputTokens: null }, taken: false };
    sink.stageRequest(this.staged);
  }

  /** The provider reported the request's input tokens. */
  usage(inputTokens: number): void {
    if (!Number.isFinite(inputTokens)) return;
    this.staged.record.reportedInputTokens = inputTokens;
    // Once a change took the record (it may be written already), the update rides a later change.
    if (this.staged.taken) this.sink.stageWrite(async (tx) => store.setContextUsage(tx, this.staged.record, inputTokens));
  }
}

export class RunRecords {
  constructor(
    private readonly storage: StorageHandle,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a prepared Main request with the Turn's next change. */
  prepared(sink: RecordSink, sessionId: string, turnId: string, model: string, report: ContextReportRecord): PreparedRequest {
    return new PreparedRequest(sink, { sessionId, turnId, model, report, preparedAt: this.now() });
  }

  /** A failed attempt: rare, so it commits on its own (the Turn may end before another change). */
  async modelStepFailed(sessionId: string, turnId: string, attempt: number, failure: { code: string; message: string; providerCode: string | undefined }): Promise<void> {
    await store
      .insertDiagnostic(this.storage, {
        sessionId,
        kind: "model_step",
        turnId,
        eventRevision: null,
        attempt,
        code: failure.code,
        message: failure.message,
        providerCode: failure.providerCode ?? null,
        limitName: null,
        recordedAt: this.now(),
      })
      .catch(() => {});
  }
}

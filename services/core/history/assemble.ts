// The history model: what a Turn (or a compaction) sees of its Session. Work is pinned to its
// admission history revision W and sees the settled Turns' transcripts and the conversation
// entries (as plain user messages) below W, in revision order — starting after the latest
// completed checkpoint made under the same visibility (its summary as the first message) — and
// only what its `visibility` lets through. An entry a Turn's prompt was recorded as
// (`conversationEntry`) is left out wherever that Turn's transcript stands for it.
//
// Reads are ranged: a checkpoint bounds them, and `HistoryCache` keeps each Session's view so the
// next Turn reads only what was added since (settled work below W never changes).
import type { CompactionCheckpoint, CompactionSummary, ConversationEntryPosition, HistoryVisibility, PromptPart } from "../../../generated/client/types.gen.js";
import type { ModelMessage, UserMessage } from "../../providers/index.js";
import { history as store, type StorageHandle, type StorageTransaction, type StoredHistoryItem, type TurnRow } from "../../storage/index.js";
import { userContent } from "../turns/running.js";
import { isVisible, normalizeVisibility, visibilityKey } from "./visibility.js";

type Context = StorageHandle | StorageTransaction;

/** Whose history: the Session, the work's admission revision, its filter and its own prompt entry. */
export interface HistoryTarget {
  readonly sessionId: string;
  /** The work's admission history revision: it sees what precedes it. */
  readonly revision: number;
  readonly visibility?: HistoryVisibility | undefined;
  /** The conversation entry the work's own prompt was recorded as (left out: the prompt stands for it). */
  readonly promptEntryId?: string | undefined;
}

/** One settled Turn's transcript or one conversation entry. */
export interface HistoryItem {
  readonly kind: "turn" | "entry";
  readonly id: string;
  readonly revision: number;
  readonly messages: readonly ModelMessage[];
  /** A Turn whose prompt was recorded as this entry. */
  readonly claims?: string | undefined;
}

/** A history as the model model sees it, before flattening: an optional checkpoint, then the items after it. */
export interface HistoryView {
  /** The compaction whose checkpoint starts the view. */
  readonly compactionId: string | undefined;
  readonly checkpoint: CompactionCheckpoint | undefined;
  readonly items: readonly HistoryItem[];
}

/** The history target of a Turn, from what its admission recorded. */
export function turnHistoryTarget(row: Pick<TurnRow, "sessionId" | "historyRevision" | "request">): HistoryTarget {
  const request = row.request as { visibility?: HistoryVisibility; conversationEntry?: ConversationEntryPosition };
  return { sessionId: row.sessionId, revision: row.historyRevision, visibility: request.visibility, promptEntryId: request.conversationEntry?.entryId };
}

export function toHistoryItem(stored: StoredHistoryItem): HistoryItem {
  if (stored.kind === "entry") {
    return { kind: "entry", id: stored.id, revision: stored.revision, messages: [{ role: "user", content: userContent(stored.content as PromptPart[]) }] };
  }
  const request = stored.request as { conversationEntry?: ConversationEntryPosition };
  return { kind: "turn", id: stored.id, revision: stored.revision, messages: stored.messages as ModelMessage[], claims: request.conversationEntry?.entryId };
}

/**
 * Reads the view of `target`: the applicable checkpoint, then the visible items after it. With
 * `base` (an earlier view of the same Session without a filter, at a revision not above the
 * target's, from the same checkpoint) only the items from `base.revision` on are read.
 */
export async function readHistory(context: Context, target: HistoryTarget, base?: { readonly revision: number; readonly view: HistoryView }): Promise<HistoryView> {
  return (await readHistoryWithHidden(context, target, base, false)).view;
}

/**
 * `readHistory`, and with `hidden` the Turns rewinds took out of the Session (read in the same
 * statement; none before the Session's first history revision, where there is nothing to hide).
 */
async function readHistoryWithHidden(
  context: Context,
  target: HistoryTarget,
  base: { readonly revision: number; readonly view: HistoryView } | undefined,
  hidden: boolean,
): Promise<{ view: HistoryView; hidden: readonly string[] }> {
  if (target.revision <= 1) return { view: { compactionId: undefined, checkpoint: undefined, items: [] }, hidden: [] };
  const visibility = normalizeVisibility(target.visibility);
  const usable = base !== undefined && !visibility && base.revision <= target.revision ? base : undefined;
  // One statement: the checkpoint, then what follows it (or what follows the base, when the base's checkpoint still applies).
  const read = await store.readHistoryRange(context, target.sessionId, {
    before: target.revision,
    visibilityKey: visibilityKey(visibility),
    floor: visibility?.floorHistoryRevision,
    base: usable ? { compactionId: usable.view.compactionId ?? null, after: usable.revision - 1 } : undefined,
    hidden,
  });
  const reused = usable !== undefined && usable.view.compactionId === read.checkpoint?.compactionId;
  // A checkpoint never changes: the reused view's object is kept, and with it its summary message
  // (`historyMessages`), so a compacted Session's history opens with the same message object Turn
  // after Turn, as the providers' and the context check's per-history caches need.
  const checkpoint = reused && usable.view.checkpoint !== undefined ? usable.view.checkpoint : read.checkpoint ? (read.checkpoint.outcome as { checkpoint: CompactionCheckpoint }).checkpoint : undefined;
  const added = read.items.map(toHistoryItem).filter((item) => isVisible(visibility, item));
  return { view: { compactionId: read.checkpoint?.compactionId, checkpoint, items: reused ? [...usable.view.items, ...added] : added }, hidden: read.hidden };
}

/** The entries whose Turn's transcript stands for them in this view (and the target's own prompt entry). */
function claimedEntries(view: HistoryView, target: HistoryTarget): Set<string> {
  const claimed = new Set<string>();
  for (const item of view.items) if (item.claims !== undefined) claimed.add(item.claims);
  if (target.promptEntryId !== undefined) claimed.add(target.promptEntryId);
  return claimed;
}

/** The items of a view that reach the model (entries a Turn stands for left out). */
export function visibleItems(view: HistoryView, target: HistoryTarget): HistoryItem[] {
  const claimed = claimedEntries(view, target);
  return view.items.filter((item) => !(item.kind === "entry" && claimed.has(item.id)) && item.messages.length > 0);
}

/** Each checkpoint's summary message, made once (see readHistoryWithHidden). */
const summaryMessages = new WeakMap<CompactionCheckpoint, UserMessage>();

/** The model-visible messages of a view: the checkpoint's summary, then every visible item's messages. */
export function historyMessages(view: HistoryView, target: HistoryTarget): ModelMessage[] {
  let summary: UserMessage | undefined;
  if (view.checkpoint !== undefined) {
    summary = summaryMessages.get(view.checkpoint);
    if (summary === undefined) summaryMessages.set(view.checkpoint, (summary = summaryMessage(view.checkpoint.summary)));
  }
  const messages: ModelMessage[] = summary !== undefined ? [summary] : [];
  for (const item of visibleItems(view, target)) messages.push(...item.messages);
  return messages;
}

/** A checkpoint's summary as the user message that opens the compacted history. */
export function summaryMessage(summary: CompactionSummary): UserMessage {
  return { role: "user", content: [{ type: "text", text: summaryText(summary) }] };
}

export function summaryText(summary: CompactionSummary): string {
  const section = (title: string, lines: readonly string[]): string => (lines.length > 0 ? `\n\n${title}:\n${lines.map((line) => `- ${line}`).join("\n")}` : "");
  return (
    `[Summary of the earlier conversation, which was compacted to fit the context window]\n\n${summary.overview}` +
    section("Key facts", summary.keyFacts) +
    section("Decisions", summary.decisions) +
    section("Open tasks", summary.openTasks)
  );
}

/** The model-visible history of `target`, read now (no cache). */
export async function assembleHistory(context: Context, target: HistoryTarget): Promise<ModelMessage[]> {
  return historyMessages(await readHistory(context, target), target);
}

/**
 * Recent Sessions' unfiltered views as of their last Turn launched here: the next launch reads
 * only what was added since, unless a newer checkpoint replaced the base. Least recently used
 * Sessions are dropped past `capacity`.
 */
export class HistoryCache {
  private readonly views = new Map<string, { readonly revision: number; readonly view: HistoryView }>();

  constructor(private readonly capacity = 128) {}

  async messages(context: Context, target: HistoryTarget): Promise<ModelMessage[]> {
    return (await this.read(context, target, false)).messages;
  }

  /**
   * The messages of `target` with the Turns rewinds hid left out (`excludedTurnIds`): the hidden
   * Turns are read in the history's own statement, and only a Session that has some reads again,
   * filtered. Resolves with the messages and the hidden Turns.
   */
  async messagesUnlessRewound(context: Context, target: HistoryTarget): Promise<{ readonly messages: ModelMessage[]; readonly hidden: readonly string[] }> {
    const first = await this.read(context, target, true);
    if (first.hidden.length === 0) return first;
    const excluded = [...new Set([...(target.visibility?.excludedTurnIds ?? []), ...first.hidden])];
    return { messages: await this.messages(context, { ...target, visibility: { ...target.visibility, excludedTurnIds: excluded } }), hidden: first.hidden };
  }

  private async read(context: Context, target: HistoryTarget, hidden: boolean): Promise<{ messages: ModelMessage[]; hidden: readonly string[] }> {
    if (normalizeVisibility(target.visibility)) {
      const read = await readHistoryWithHidden(context, target, undefined, hidden);
      return { messages: historyMessages(read.view, target), hidden: read.hidden };
    }
    const read = await readHistoryWithHidden(context, target, this.views.get(target.sessionId), hidden);
    this.views.delete(target.sessionId);
    this.views.set(target.sessionId, { revision: target.revision, view: read.view });
    if (this.views.size > this.capacity) this.views.delete(this.views.keys().next().value!);
    return { messages: historyMessages(read.view, target), hidden: read.hidden };
  }

  delete(sessionId: string): void {
    this.views.delete(sessionId);
  }
}

// Conversation entries (`appendConversation`): outside conversation committed to a Session's
// history under its next history revision, as a plain user message for later work. An append
// never wakes the runner, never creates a Turn and never calls a model; work admitted before it
// never sees it. The same entryId with the same content replays the recorded receipt; with
// different content it is the reference's ConversationEntryConflict (the contract's 409
// ConflictError).
import type { AppendConversationReceipt, AppendConversationRequest, Attribution } from "../../../generated/client/types.gen.js";
import { conflict, notFound } from "../../contract/failure.js";
import { history as store, type ConversationEntryRow, type StorageHandle } from "../../storage/index.js";
import { requestHash } from "../sessions.js";
import { checkText } from "../validation.js";

export interface ConversationServiceOptions {
  readonly storage: StorageHandle;
  readonly now?: () => number;
}

function receiptOf(row: ConversationEntryRow): AppendConversationReceipt {
  const receipt: AppendConversationReceipt = { sessionId: row.sessionId, entryId: row.id, historyRevision: row.historyRevision, acceptedAt: row.acceptedAt };
  if (row.attribution !== null) receipt.attribution = row.attribution as Attribution;
  return receipt;
}

export class ConversationService {
  private readonly now: () => number;

  constructor(private readonly options: ConversationServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async append(server: string, sessionId: string, clientId: string, request: AppendConversationRequest): Promise<AppendConversationReceipt> {
    // The identity is the entry and its content: who sends a replay does not make it different.
    const hash = requestHash({ entryId: request.entryId, content: request.content });
    for (const [index, part] of request.content.entries()) if (part.type === "text") checkText(part.text, `/content/${index}/text`);
    const attribution: Attribution = request.authorId !== undefined ? { clientId, authorId: request.authorId } : { clientId };
    let row: ConversationEntryRow | undefined;
    try {
      row = await store.appendConversationEntry(
        this.options.storage,
        { server, sessionId },
        { id: request.entryId, content: request.content, attribution, acceptedAt: this.now(), requestHash: hash },
      );
    } catch (error) {
      // The entry exists (a replay, or a concurrent append that won): its receipt, or a conflict.
      // The failed append rolled back, so it took no history revision.
      const replay = await this.replay(sessionId, request.entryId, hash);
      if (replay) return replay;
      throw error;
    }
    if (!row) throw notFound("session", `Session ${sessionId} does not exist`);
    return receiptOf(row);
  }

  private async replay(sessionId: string, entryId: string, hash: string): Promise<AppendConversationReceipt | undefined> {
    const existing = await store.getConversationEntry(this.options.storage, entryId);
    if (!existing) return undefined;
    if (existing.sessionId !== sessionId || existing.requestHash !== hash) throw conflict(`Conversation entry ${entryId} was already appended with different content`);
    return receiptOf(existing);
  }
}

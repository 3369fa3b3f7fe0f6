// The plugin journal read (`listPluginJournal`): durable plugin-reported facts in record order —
// by the Turn's sequence, then the entry's sequence within it — optionally for one Turn, paged
// after a (`afterTurnSequence`, `afterSequence`) position. Plugins write through
// `services/storage` `journal.appendJournalEntry`.
import type { ListPluginJournalData, PluginJournalEntry, PluginJournalResponse } from "../../../generated/client/types.gen.js";
import { notFound } from "../../contract/failure.js";
import { getSession, journal as store, turns, type PluginJournalRow, type StorageHandle } from "../../storage/index.js";
import { pageLimit, parsePosition } from "./query.js";

function toEntry(row: PluginJournalRow): PluginJournalEntry {
  const entry: PluginJournalEntry = {
    sessionId: row.sessionId,
    turnId: row.turnId,
    sequence: row.sequence,
    pluginId: row.pluginId,
    kind: row.kind,
    summary: row.summary,
    data: row.data,
    recordedAt: row.recordedAt,
  };
  if (row.logicalCallOrdinal !== null) entry.logicalCallOrdinal = row.logicalCallOrdinal;
  if (row.toolCallId !== null) entry.toolCallId = row.toolCallId;
  return entry;
}

export class JournalService {
  constructor(private readonly storage: StorageHandle) {}

  async list(server: string, sessionId: string, query: ListPluginJournalData["query"]): Promise<PluginJournalResponse> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
    const limit = pageLimit(query?.limit);
    const after = parsePosition(query, "afterTurnSequence", "afterSequence", Number.MAX_SAFE_INTEGER) ?? [0, 0];
    const turnId = query?.turnId;
    if (turnId !== undefined && !(await turns.getTurn(this.storage, sessionId, turnId))) throw notFound("turn", `Turn ${turnId} does not exist`);
    const rows = await store.listJournal(this.storage, sessionId, { turnId, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const response: PluginJournalResponse = { sessionId, entries: page.map(toEntry) };
    const last = page.at(-1);
    if (rows.length > limit && last) response.next = { turnSequence: last.turnSequence, sequence: last.sequence };
    return response;
  }
}

// The plugin journal's writing side: a plugin's journal kinds (checked at setup) and its
// `reportJournal`, which validates an entry (registered kind, summary, data schema and byte cap)
// and hands it to a `JournalSink` that stores it under the per-kind and per-Turn caps. A rejected
// report throws a `PluginError` without `publicMessage` and writes nothing; the Turn continues.
// Reports made outside a Turn (an empty `turnId`) are accepted and dropped.
import {
  MAX_JOURNAL_DATA_BYTES,
  MAX_JOURNAL_ENTRIES_PER_TURN,
  MAX_JOURNAL_KIND_LENGTH,
  MAX_JOURNAL_SUMMARY_LENGTH,
  PluginError,
  type JournalEntry,
  type JournalKindDeclaration,
} from "../../plugin/index.js";
import { journal as store, type StorageHandle } from "../storage/index.js";
import type { JsonSchema as ToolJsonSchema } from "../tools/tool.js";
import { validateToolInput } from "../tools/validate.js";
import { copyJson, hasLoneSurrogate, isIdentifier, isRecord, jsonProblem, schemaProblem } from "./checks.js";
import type { Checked } from "./declarations.js";

/** A checked journal kind. */
export interface JournalKind {
  readonly kind: string;
  readonly dataSchema: JournalKindDeclaration["dataSchema"];
  readonly maxDataBytes: number;
  readonly maxEntriesPerTurn: number;
}

const cap = (value: unknown, max: number, name: string): number | string => {
  if (value === undefined) return max;
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max ? (value as number) : `${name} must be an integer from 1 to ${max}`;
};

export function checkJournalKind(raw: unknown): Checked<JournalKind> {
  if (!isRecord(raw)) return { ok: false, message: "a journal kind declaration must be an object" };
  const kind = raw["kind"];
  if (!isIdentifier(kind, MAX_JOURNAL_KIND_LENGTH)) return { ok: false, message: `invalid journal kind ${JSON.stringify(kind)}` };
  const problem = schemaProblem(raw["dataSchema"]);
  if (problem) return { ok: false, message: `journal kind ${JSON.stringify(kind)}: dataSchema: ${problem}` };
  const maxDataBytes = cap(raw["maxDataBytes"], MAX_JOURNAL_DATA_BYTES, "maxDataBytes");
  if (typeof maxDataBytes === "string") return { ok: false, message: `journal kind ${JSON.stringify(kind)}: ${maxDataBytes}` };
  const maxEntriesPerTurn = cap(raw["maxEntriesPerTurn"], MAX_JOURNAL_ENTRIES_PER_TURN, "maxEntriesPerTurn");
  if (typeof maxEntriesPerTurn === "string") return { ok: false, message: `journal kind ${JSON.stringify(kind)}: ${maxEntriesPerTurn}` };
  return { ok: true, value: { kind, dataSchema: copyJson(raw["dataSchema"]) as JournalKind["dataSchema"], maxDataBytes, maxEntriesPerTurn } };
}

/** One validated entry on its way to storage. */
export interface JournalRecord {
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolCallId?: string | undefined;
  readonly pluginId: string;
  readonly kind: string;
  readonly summary: string;
  readonly data: unknown;
  /** This kind's per-Turn cap (the Turn-wide cap is MAX_JOURNAL_ENTRIES_PER_TURN). */
  readonly maxEntriesOfKind: number;
}

/** `stored`, or why the sink refused the record without writing it. */
export type JournalAppend = "stored" | "kind_cap" | "turn_cap" | "no_turn";

/** Where reported entries go. */
export interface JournalSink {
  append(record: JournalRecord): Promise<JournalAppend>;
}

/** The call an entry is reported from. */
export interface JournalCall {
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolCallId?: string | undefined;
}

/** One plugin's journal: its kinds and its `reportJournal`. */
export class PluginJournal {
  private readonly validators = new Map<string, { readonly def: Parameters<typeof validateToolInput>[0]; readonly kind: JournalKind }>();

  constructor(
    readonly pluginId: string,
    kinds: readonly JournalKind[],
    private readonly sink: JournalSink | undefined,
  ) {
    for (const kind of kinds) {
      const def = { id: `journal:${kind.kind}`, description: "", inputSchema: kind.dataSchema as ToolJsonSchema, permissions: () => [], execute: async () => ({ result: { format: "text" as const, value: "" } }) };
      this.validators.set(kind.kind, { def, kind });
    }
  }

  get kinds(): readonly string[] {
    return [...this.validators.keys()];
  }

  /** Validates and stores one entry; rejects with a `PluginError` (no `publicMessage`) without writing. */
  async report(call: JournalCall, entry: JournalEntry): Promise<void> {
    const reject = (message: string): never => {
      throw new PluginError({ message: `Journal entry rejected: ${message}.` });
    };
    if (!isRecord(entry)) return reject("an entry must be { kind, summary, data }");
    const registered = this.validators.get(entry.kind);
    if (!registered) return reject(`kind ${JSON.stringify(entry.kind)} is not registered by plugin ${this.pluginId}`);
    if (typeof entry.summary !== "string" || hasLoneSurrogate(entry.summary)) return reject("summary must be a string without unpaired surrogates");
    const summary = entry.summary.length > MAX_JOURNAL_SUMMARY_LENGTH ? cutSummary(entry.summary) : entry.summary;
    if (!isRecord(entry.data)) return reject("data must be a JSON object");
    const json = jsonProblem(entry.data);
    if (json) return reject(`data is not plain JSON: ${json}`);
    const bytes = Buffer.byteLength(JSON.stringify(entry.data), "utf8");
    if (bytes > registered.kind.maxDataBytes) return reject(`data is ${bytes} bytes, more than the kind's ${registered.kind.maxDataBytes}`);
    const checked = validateToolInput(registered.def, entry.data);
    if (!checked.ok) return reject(`data does not match the kind's schema (${checked.problems.join("; ")})`);
    if (call.turnId === "") return; // outside a Turn: accepted and dropped
    if (!this.sink) return reject("this host keeps no journal");
    const result = await this.sink.append({
      ...call,
      pluginId: this.pluginId,
      kind: registered.kind.kind,
      summary,
      data: copyJson(entry.data),
      maxEntriesOfKind: registered.kind.maxEntriesPerTurn,
    });
    if (result === "kind_cap") return reject(`the Turn already holds ${registered.kind.maxEntriesPerTurn} entries of kind ${JSON.stringify(entry.kind)}`);
    if (result === "turn_cap") return reject(`the Turn already holds ${MAX_JOURNAL_ENTRIES_PER_TURN} journal entries`);
    if (result === "no_turn") return reject("the Turn does not exist");
  }
}

/** Cuts at MAX_JOURNAL_SUMMARY_LENGTH code units without splitting a surrogate pair. */
function cutSummary(summary: string): string {
  let cut = summary.slice(0, MAX_JOURNAL_SUMMARY_LENGTH);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut;
}

/** The storage-backed sink: counts and appends in one transaction, so concurrent reports cannot pass a cap. */
export function storageJournalSink(storage: StorageHandle, now: () => number = Date.now): JournalSink {
  return {
    append: (record) =>
      storage.transaction(async (tx) => {
        const counts = await tx.sql.get<{ total: number; same: number }>(
          "SELECT count(*) AS total, coalesce(sum(plugin_id = ?2 AND kind = ?3), 0) AS same FROM plugin_journal WHERE turn_id = ?1",
          [record.turnId, record.pluginId, record.kind],
        );
        if ((counts?.same ?? 0) >= record.maxEntriesOfKind) return "kind_cap";
        if ((counts?.total ?? 0) >= MAX_JOURNAL_ENTRIES_PER_TURN) return "turn_cap";
        const row = await store.appendJournalEntry(tx, {
          turnId: record.turnId,
          pluginId: record.pluginId,
          kind: record.kind,
          summary: record.summary,
          data: record.data,
          logicalCallOrdinal: null,
          toolCallId: record.toolCallId ?? null,
          recordedAt: now(),
        });
        return row ? "stored" : "no_turn";
      }),
  };
}

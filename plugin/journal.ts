// `journal`: bounded durable facts a plugin reports from its tools and models.
import type { JsonObject, JsonSchema } from "./json.js";

/** One fact kind, registered with `context.journal.registerKind`; scoped to the plugin. */
export interface JournalKindDeclaration {
  /** ≤ 64 characters: a lowercase letter, then lowercase letters and digits joined by single `.`, `_` or `-`. */
  readonly kind: string;
  /** Object-rooted JSON Schema (restricted keywords) every entry's data must match. */
  readonly dataSchema: JsonSchema;
  /** 1 to `MAX_JOURNAL_DATA_BYTES`; absent means the global cap. */
  readonly maxDataBytes?: number | undefined;
  /** 1 to `MAX_JOURNAL_ENTRIES_PER_TURN`; absent means the global cap. */
  readonly maxEntriesPerTurn?: number | undefined;
}

/** One fact reported with `reportJournal`. */
export interface JournalEntry {
  /** A kind this plugin registered at setup. */
  readonly kind: string;
  /** One line; Core truncates it to `MAX_JOURNAL_SUMMARY_LENGTH`, but rejects unpaired surrogates. */
  readonly summary: string;
  /** Must match the kind's `dataSchema` and fit its byte cap. */
  readonly data: JsonObject;
}

export {
  DEFAULT_BUSY_TIMEOUT_MS,
  createStorageHandle,
  drizzleOver,
  isStorageHandle,
  openDatabase,
  type HandleWriter,
  type StorageHandleParts,
  type OpenDatabaseOptions,
  type StorageDatabase,
  type StorageExecutor,
  type StorageHandle,
  type StorageTransaction,
  type Durability,
} from "./database.js";
export { resolveDatabaseLocation, type DatabaseLocation } from "./location.js";
export { Queue } from "./queue.js";
export {
  StorageBusy,
  StorageCorrupt,
  StorageFull,
  StorageMigrationDiverged,
  StorageMigrationFailed,
  StorageNewerThanBinary,
  StorageNotADatabase,
  StorageResetRequired,
  StorageSchemaDrifted,
  StorageUnreachable,
  isBusyError,
  isFullError,
  isRetryableStorageError,
  isStorageError,
  isStorageMigrationFailure,
  mapBusy,
  toStorageError,
  type SchemaDrift,
  type StorageError,
  type StorageMigrationFailure,
  type StorageOpenFailure,
} from "./errors.js";
export {
  applyMigrations,
  applyMigrationsInHostTransaction,
  pendingMigrations,
  validateRegistry,
  LEDGER_TABLE,
  SCHEMA_OBJECT_TABLE,
  type ApplyMigrationsOptions,
  type HostTransactionMigrationOptions,
  type MigrationReport,
  type StorageMigrationProgress,
} from "./migrate.js";
export { serverMigrations, type Migration, type MigrationRegistry, type MigrationTransaction } from "./migrations/registry.js";
export { nextServerCursor, nextSessionActivityCursor, readServerCursor } from "./cursors.js";
export * as schema from "./schema.js";
export type {
  DeletedSessionRow,
  SavedPermissionInsert,
  SavedPermissionRow,
  SessionInsert,
  SessionRow,
  StorageSchema,
  StoredApprovalConfiguration,
  StoredForkedFrom,
  StoredPermissionRule,
} from "./schema.js";
export * from "./sessions.js";
export * as sessions from "./sessions.js";
export * as turns from "./turns.js";
export type { NewTurn, NewTurnEvent, PartWrite, TurnChange, TurnPatch, TurnPage, Claim, TurnStamps, AdmissionPlan, AdmissionClaim, Admission } from "./turns.js";
export type { SqlExecutor, SqlValue } from "./engine.js";
export { resultSet, toRow } from "./row.js";
export type { TurnRow, TurnInsert, TurnPartRow, TurnSteerRow, TurnEventRow, ConversationEntryRow, CompactionRow, CompactionInsert, PluginJournalRow } from "./schema.js";
export * as history from "./history.js";
export type { ForkCopy, NewConversationEntry, StoredHistoryItem } from "./history.js";
export * as compactions from "./compactions.js";
export type { CompactionPatch, NewCompaction } from "./compactions.js";
export * as journal from "./journal.js";
export type { NewJournalEntry } from "./journal.js";
export * as historyRows from "./history-rows.js";
export type { HistoryKind, HistoryRole, HistoryRowRecord, HistoryRowWrite, HistoryToolRecord } from "./history-rows.js";
export { codePointBefore, foldCase, foldCodePoint, isWordCodePoint, utf8Length } from "./text-fold.js";
export { SIMPLE_CASE_FOLDING, UNICODE_VERSION } from "./casefold-data.js";
export * as diagnostics from "./diagnostics.js";
export type { ContextRecord, DiagnosticKind, DiagnosticRecord, NewDiagnostic, PreparedRequestRecord } from "./diagnostics.js";
export * as terminals from "./terminals.js";
export type { StoredTerminal, NewTerminal } from "./terminals.js";
export * as workspace from "./workspace.js";
export type { ManifestContent, ManifestEntry, RecordedMode, StoredManifest, StoredPatchFile, TouchRow, TurnPatchRow, NewRewind } from "./workspace.js";
export * as sessionResources from "./session-resources.js";
export type { PromptSourceRow } from "./session-resources.js";

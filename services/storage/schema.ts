// Longer than ~400 lines on purpose: the drizzle schema is one module (drizzle-kit reads it whole
// in tests/storage/schema-parity.test.ts against the migrated database), one table after another.
/**
 * The drizzle schema. It mirrors, column for column, what the migrations in `migrations/`
 * create; `tests/storage/schema-parity.test.ts` holds the two together. Change the schema by
 * adding a migration *and* editing this file.
 */
import { sql } from "drizzle-orm";
import {
  blob,
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
  type AnySQLiteColumn,
} from "drizzle-orm/sqlite-core";

// ---------------------------------------------------------------------------
// Stored JSON shapes (the storage room imports no contract types; these mirror the v1 wire shapes)

export interface StoredPermissionRule {
  action: string;
  resource: string;
  effect: "allow" | "ask" | "deny";
}

export interface StoredApprovalConfiguration {
  timeoutMs?: { kind: "unlimited" } | { kind: "finite"; value: number };
}

export interface StoredForkedFrom {
  parentSessionId: string;
  turnId?: string;
  through?:
    | { kind: "turnMessage"; turnId: string; messageIndex: number }
    | { kind: "conversationEntry"; entryId: string };
  visibility?: {
    floorHistoryRevision?: number;
    excludedTurnIds?: string[];
    excludedEntryIds?: string[];
  };
}

// ---------------------------------------------------------------------------
// Tables

/** One row (`id = 1`): the per-database monotonic server activity cursor. */
export const serverActivity = sqliteTable(
  "server_activity",
  {
    id: integer("id").primaryKey(),
    cursor: integer("cursor").notNull().default(0),
  },
  (table) => [check("server_activity_single_row", sql`${table.id} = 1`)],
);

export const session = sqliteTable(
  "session",
  {
    id: text("id").primaryKey(),
    server: text("server").notNull(),
    workdir: text("workdir").notNull(),
    projectId: text("project_id").notNull(),
    title: text("title"),
    defaultModel: text("default_model"),
    systemPrompt: text("system_prompt"),
    agent: text("agent"),
    forkedFrom: text("forked_from", { mode: "json" }).$type<StoredForkedFrom>(),
    /** Parent of a sub-agent child; deleting the parent deletes its children. */
    spawnedFromSessionId: text("spawned_from_session_id").references(
      (): AnySQLiteColumn => session.id,
    ),
    configurationRevision: integer("configuration_revision").notNull().default(1),
    permissions: text("permissions", { mode: "json" }).$type<StoredPermissionRule[]>().notNull(),
    approval: text("approval", { mode: "json" }).$type<StoredApprovalConfiguration>().notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    nextSequence: integer("next_sequence").notNull().default(1),
    /** Per-Session activity counter; stamps changed rows for `listSessionActivity`. */
    activityCursor: integer("activity_cursor").notNull().default(0),
    /** The server cursor this row was last stamped at. */
    serverCursor: integer("server_cursor").notNull(),
    /** Hash of the create (or fork) request, for exact-replay checks. */
    createRequestHash: text("create_request_hash"),
    /** Set while a deletion is in progress (the Session refuses new work). */
    deleting: integer("deleting", { mode: "boolean" }).notNull().default(false),
    /**
     * The runner lease: the host instance (and its process) that runs this Session's Turns while
     * the lease lasts. Absent or expired, any server may run them.
     */
    runnerInstance: text("runner_instance"),
    runnerProcessId: integer("runner_process_id"),
    runnerLeaseExpiresAt: integer("runner_lease_expires_at"),
    /** The last history revision handed out (to an admitted Turn or a conversation entry). */
    historyRevision: integer("history_revision").notNull().default(0),
    /** The latest model request's context use (`turn_context_use` copies it from the Turn). */
    contextUse: text("context_use", { mode: "json" }).$type<unknown>(),
    /** True while the Session has a plugin overlay row (`session_plugin`; kept by triggers). */
    pluginOverlay: integer("plugin_overlay", { mode: "boolean" }).notNull().default(false),
  },
  (table) => [
    index("session_server_created_at_idx").on(table.server, table.createdAt),
    index("session_server_project_idx").on(table.server, table.projectId),
    index("session_spawned_from_idx").on(table.spawnedFromSessionId),
  ],
);

/** Retired Session identities and deletion markers (`session.deleted` on the server stream). */
export const deletedSession = sqliteTable(
  "deleted_session",
  {
    sessionId: text("session_id").primaryKey(),
    server: text("server").notNull(),
    deletedAt: integer("deleted_at").notNull(),
    serverCursor: integer("server_cursor").notNull(),
  },
  (table) => [index("deleted_session_server_cursor_idx").on(table.server, table.serverCursor)],
);

/** Durable Session-scoped allow grants created by an `always` permission reply. */
export const savedPermission = sqliteTable(
  "saved_permission",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    action: text("action").notNull(),
    resource: text("resource").notNull(),
    createdAt: integer("created_at").notNull(),
    sourcePermissionRequestId: text("source_permission_request_id").notNull(),
  },
  (table) => [index("saved_permission_session_idx").on(table.sessionId, table.createdAt)],
);

/**
 * A Turn: its request, policy, phase and outcome, the claim of the process running it (owner and
 * lease), and the cursors of its last change. JSON columns hold the contract's shapes, encoded and
 * decoded by core (this room does not import the contract).
 */
export const turn = sqliteTable(
  "turn",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    phase: text("phase").$type<"pending" | "running" | "completed" | "cancelled" | "failed">().notNull(),
    revision: integer("revision").notNull(),
    request: text("request", { mode: "json" }).$type<unknown>().notNull(),
    attribution: text("attribution", { mode: "json" }).$type<unknown>(),
    model: text("model").notNull(),
    modelLeaseId: text("model_lease_id").notNull(),
    requestOptionsId: text("request_options_id").notNull(),
    providerOptions: text("provider_options", { mode: "json" }).$type<unknown>(),
    /** The Turn's model-visible transcript (provider-neutral messages), replayed by later Turns. */
    messages: text("messages", { mode: "json" }).$type<unknown[]>().notNull().default(sql`'[]'`),
    policy: text("policy", { mode: "json" }).$type<unknown>().notNull(),
    steeringGate: text("steering_gate").$type<"open" | "closed">().notNull().default("open"),
    promotedBatchCount: integer("promoted_batch_count").notNull().default(0),
    usage: text("usage", { mode: "json" }).$type<unknown>(),
    contextUse: text("context_use", { mode: "json" }).$type<unknown>(),
    cancellation: text("cancellation", { mode: "json" }).$type<unknown>(),
    outcome: text("outcome", { mode: "json" }).$type<unknown>(),
    acceptedAt: integer("accepted_at").notNull(),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    /** Hash of the admission request, for exact-replay checks. */
    requestHash: text("request_hash").notNull(),
    /** The claim: the process running the Turn, its host instance, and the lease it renews. */
    ownerProcessId: integer("owner_process_id"),
    ownerInstance: text("owner_instance"),
    leaseExpiresAt: integer("lease_expires_at"),
    activityCursor: integer("activity_cursor").notNull(),
    serverCursor: integer("server_cursor").notNull(),
    /** The Session history revision taken at admission: the Turn sees what precedes it. */
    historyRevision: integer("history_revision").notNull().default(0),
    /** The workspace instructions (AGENTS.md) read at admission, kept for recovery and compaction. */
    instructions: text("instructions", { mode: "json" }).$type<unknown>(),
    /** Set when the Turn settled having changed nothing recorded: its empty patch (no `turn_patch` row). */
    emptyPatchAt: integer("empty_patch_at"),
    /** The Turn's latest prepared Main request as its change staged it; a trigger records each in `session_context`. */
    preparedRequest: text("prepared_request", { mode: "json" }).$type<unknown>(),
  },
  (table) => [
    uniqueIndex("turn_session_sequence_idx").on(table.sessionId, table.sequence),
    index("turn_phase_idx").on(table.phase, table.sessionId),
    index("turn_session_history_idx").on(table.sessionId, table.historyRevision),
  ],
);

/** The ordered parts of a Turn (text, reasoning, refusal, tool, steering), one JSON row each. */
export const turnPart = sqliteTable(
  "turn_part",
  {
    turnId: text("turn_id")
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    ordinal: integer("ordinal").notNull(),
    data: text("data", { mode: "json" }).$type<unknown>().notNull(),
  },
  (table) => [primaryKey({ columns: [table.turnId, table.ordinal] })],
);

/** Steering input addressed to a running Turn. */
export const turnSteer = sqliteTable(
  "turn_steer",
  {
    steerId: text("steer_id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    turnId: text("turn_id")
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    data: text("data", { mode: "json" }).$type<unknown>().notNull(),
    requestHash: text("request_hash").notNull(),
  },
  (table) => [index("turn_steer_turn_idx").on(table.turnId, table.sequence)],
);

/**
 * The append-only log of durable Turn events. Each row has its own Turn revision, Session activity
 * cursor and server cursor, so every watch stream resumes exactly after the last one it sent.
 * `data` is the event payload without cursors (null for `turn.snapshot`, rendered at read time).
 * The `turn_event_stamps` trigger (migration 20261201100000) advances `server_activity.cursor`
 * and the Session's `activity_cursor` to each inserted event's stamps.
 */
export const turnEvent = sqliteTable(
  "turn_event",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    turnId: text("turn_id")
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    revision: integer("revision").notNull(),
    activityCursor: integer("activity_cursor").notNull(),
    serverCursor: integer("server_cursor").notNull(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).$type<unknown>(),
  },
  (table) => [
    index("turn_event_turn_idx").on(table.turnId, table.revision),
    index("turn_event_session_idx").on(table.sessionId, table.activityCursor),
    index("turn_event_server_idx").on(table.serverCursor),
  ],
);

/**
 * Outside conversation appended to a Session without admitting work: a user message committed
 * under the Session's next history revision. `content` is the contract's prompt parts.
 */
export const conversationEntry = sqliteTable(
  "conversation_entry",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    historyRevision: integer("history_revision").notNull(),
    content: text("content", { mode: "json" }).$type<unknown[]>().notNull(),
    attribution: text("attribution", { mode: "json" }).$type<unknown>(),
    acceptedAt: integer("accepted_at").notNull(),
    /** Hash of the append request, for exact-replay checks. */
    requestHash: text("request_hash").notNull(),
  },
  (table) => [uniqueIndex("conversation_entry_session_revision_idx").on(table.sessionId, table.historyRevision)],
);

/**
 * A context compaction: manual (its own work sequence, ordinal 1, and history revision) or
 * automatic (its Turn's sequence with ordinals 1, 2, … and the Turn's revision). JSON columns
 * hold the contract's shapes. A completed one is a checkpoint through `throughHistoryRevision`
 * for later work whose visibility has the same `visibilityKey` (empty: no visibility filter).
 */
export const compaction = sqliteTable(
  "compaction",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    ordinal: integer("ordinal").notNull(),
    /** The history revision the compaction sees below (its own, or its Turn's). */
    historyRevision: integer("history_revision").notNull(),
    /** The Turn an automatic compaction ran in. */
    turnId: text("turn_id").references(() => turn.id, { onDelete: "cascade" }),
    trigger: text("trigger", { mode: "json" }).$type<unknown>().notNull(),
    request: text("request", { mode: "json" }).$type<unknown>().notNull(),
    attribution: text("attribution", { mode: "json" }).$type<unknown>(),
    model: text("model").notNull(),
    modelLeaseId: text("model_lease_id").notNull(),
    requestOptionsId: text("request_options_id").notNull(),
    providerOptions: text("provider_options", { mode: "json" }).$type<unknown>(),
    policy: text("policy", { mode: "json" }).$type<unknown>().notNull(),
    phase: text("phase").$type<"pending" | "running" | "completed" | "cancelled" | "failed">().notNull(),
    revision: integer("revision").notNull(),
    visibilityKey: text("visibility_key").notNull().default(""),
    throughHistoryRevision: integer("through_history_revision"),
    cancellation: text("cancellation", { mode: "json" }).$type<unknown>(),
    usage: text("usage", { mode: "json" }).$type<unknown>(),
    outcome: text("outcome", { mode: "json" }).$type<unknown>(),
    acceptedAt: integer("accepted_at").notNull(),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    requestHash: text("request_hash").notNull(),
    ownerProcessId: integer("owner_process_id"),
    ownerInstance: text("owner_instance"),
    leaseExpiresAt: integer("lease_expires_at"),
  },
  (table) => [
    uniqueIndex("compaction_session_position_idx").on(table.sessionId, table.sequence, table.ordinal),
    index("compaction_phase_idx").on(table.phase, table.sessionId),
    index("compaction_checkpoint_idx").on(table.sessionId, table.visibilityKey, table.throughHistoryRevision),
    index("compaction_turn_idx").on(table.turnId),
  ],
);

/** Durable plugin-reported facts, in (Turn sequence, entry sequence) order. `data` is JSON text. */
export const pluginJournal = sqliteTable(
  "plugin_journal",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    turnId: text("turn_id")
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    turnSequence: integer("turn_sequence").notNull(),
    sequence: integer("sequence").notNull(),
    pluginId: text("plugin_id").notNull(),
    kind: text("kind").notNull(),
    summary: text("summary").notNull(),
    data: text("data", { mode: "json" }).$type<unknown>().notNull(),
    logicalCallOrdinal: integer("logical_call_ordinal"),
    toolCallId: text("tool_call_id"),
    recordedAt: integer("recorded_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.turnId, table.sequence] }), index("plugin_journal_session_idx").on(table.sessionId, table.turnSequence, table.sequence)],
);

/**
 * Recorded desired revisions of a Session's plugin overlay, in `sequence` order. JSON columns hold
 * the contract's source, resolution, options, MCP servers and Skills; `artifact` is the pinned
 * snapshot a restart loads.
 */
export const sessionPluginRevision = sqliteTable(
  "session_plugin_revision",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    sequence: integer("sequence").notNull(),
    source: text("source", { mode: "json" }).$type<unknown>().notNull(),
    resolved: text("resolved", { mode: "json" }).$type<unknown>().notNull(),
    options: text("options", { mode: "json" }).$type<unknown>().notNull(),
    mcpServers: text("mcp_servers", { mode: "json" }).$type<unknown[]>().notNull(),
    skills: text("skills", { mode: "json" }).$type<unknown[]>().notNull(),
    artifact: text("artifact"),
    requestHash: text("request_hash").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.sessionId, table.id] }), uniqueIndex("session_plugin_revision_sequence_idx").on(table.sessionId, table.sequence)],
);

/** A Session's plugin overlay state: the desired revision, its activation, the active revision. */
export const sessionPlugin = sqliteTable("session_plugin", {
  sessionId: text("session_id")
    .primaryKey()
    .references(() => session.id, { onDelete: "cascade" }),
  nextSequence: integer("next_sequence").notNull().default(1),
  desiredRevisionId: text("desired_revision_id"),
  activationState: text("activation_state").$type<"pending" | "started" | "active" | "failed">(),
  activationFailure: text("activation_failure"),
  activeRevisionId: text("active_revision_id"),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * Published history rows (`history-rows.ts`): immutable, positioned (`source_sequence`,
 * `item_index`). The FTS5 index `history_fts` over them (migration 20261204100000) is a virtual
 * table drizzle does not describe.
 */
export const historyRow = sqliteTable(
  "history_row",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    sourceSequence: integer("source_sequence").notNull(),
    itemIndex: integer("item_index").notNull(),
    role: text("role").notNull(),
    kind: text("kind").notNull(),
    turnId: text("turn_id"),
    entryId: text("entry_id"),
    partId: text("part_id"),
    hidden: integer("hidden", { mode: "boolean" }).notNull().default(false),
    body: text("body").notNull(),
    thinking: text("thinking"),
    toolInput: text("tool_input"),
    tool: text("tool"),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [uniqueIndex("history_row_position_idx").on(table.sessionId, table.sourceSequence, table.itemIndex)],
);

/** A Session's operational failure records (`diagnostics.ts`), numbered per Session by `sequence`. */
export const sessionDiagnostic = sqliteTable(
  "session_diagnostic",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    kind: text("kind").notNull(),
    turnId: text("turn_id"),
    eventRevision: integer("event_revision"),
    attempt: integer("attempt"),
    code: text("code").notNull(),
    message: text("message").notNull(),
    providerCode: text("provider_code"),
    limitName: text("limit_name"),
    recordedAt: integer("recorded_at").notNull(),
  },
  (table) => [uniqueIndex("session_diagnostic_sequence_idx").on(table.sessionId, table.sequence)],
);

/** The Main requests a Session prepared (`diagnostics.ts`), numbered per Session by `sequence`. */
export const sessionContext = sqliteTable(
  "session_context",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    turnId: text("turn_id").notNull(),
    model: text("model").notNull(),
    report: text("report").notNull(),
    reportedInputTokens: integer("reported_input_tokens"),
    preparedAt: integer("prepared_at").notNull(),
  },
  (table) => [uniqueIndex("session_context_sequence_idx").on(table.sessionId, table.sequence)],
);

/** A PTY opened in a Session's workdir (see migration 20261205100000). `display`: the settled display, JSON. */
export const terminal = sqliteTable(
  "terminal",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    command: text("command", { mode: "json" }).$type<string[]>().notNull(),
    requestHash: text("request_hash").notNull(),
    initialCols: integer("initial_cols").notNull(),
    initialRows: integer("initial_rows").notNull(),
    cols: integer("cols").notNull(),
    rows: integer("rows").notNull(),
    status: text("status").$type<"running" | "exited">().notNull(),
    exitCode: integer("exit_code"),
    signal: text("signal"),
    createdAt: integer("created_at").notNull(),
    exitedAt: integer("exited_at"),
    ownerPid: integer("owner_pid").notNull(),
    ownerInstance: text("owner_instance").notNull(),
    display: text("display"),
    /** JSON `TerminalToolOrigin` for a `shell` call's PTY (migration 20261206100000); null when a client opened it. */
    origin: text("origin"),
    /** Until when the owner host vouches for a running PTY (migration 20261208100000); null for older rows. */
    leaseExpiresAt: integer("lease_expires_at"),
  },
  (table) => [index("terminal_session_idx").on(table.sessionId, table.createdAt)],
);

export type TerminalRow = typeof terminal.$inferSelect;


/** Content-addressed file contents of recorded workdir states (services/core/rewind); `bytes` as `encoding` says (identity | deflate). */
export const workspaceBlob = sqliteTable("workspace_blob", {
  sha256: text("sha256").primaryKey().notNull(),
  size: integer("size").notNull(),
  bytes: blob("bytes", { mode: "buffer" }).notNull(),
  encoding: text("encoding").default("identity").notNull(),
});

/** Who needs a blob: `t:<turnId>` or `m:<sessionId>`; the trigger `workspace_blob_gc` frees a blob with its last reference. */
export const workspaceBlobRef = sqliteTable(
  "workspace_blob_ref",
  {
    owner: text("owner").notNull(),
    sha256: text("sha256").notNull(),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
  },
  (table) => [primaryKey({ columns: [table.owner, table.sha256] }), index("workspace_blob_ref_sha_idx").on(table.sha256), index("workspace_blob_ref_session_idx").on(table.sessionId)],
);

/** A Session's last recorded workdir state: the blob `files_sha256` holds its JSON ([pathBase64, sha256 | "", mode, size, mtimeMs, ino][]). */
export const workspaceManifest = sqliteTable("workspace_manifest", {
  sessionId: text("session_id")
    .primaryKey()
    .notNull()
    .references(() => session.id, { onDelete: "cascade" }),
  turnId: text("turn_id"),
  filesSha256: text("files_sha256").notNull(),
  recordedAt: integer("recorded_at").notNull(),
});

/** The before-image a file tool took at a Turn's first write of a path (null digest: the file did not exist). */
export const turnTouch = sqliteTable(
  "turn_touch",
  {
    turnId: text("turn_id")
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    beforeSha256: text("before_sha256"),
    beforeMode: integer("before_mode"),
    beforeSize: integer("before_size"),
  },
  (table) => [primaryKey({ columns: [table.turnId, table.path] })],
);

/** The immutable record of one settled Turn's workdir changes and its complete patch text. */
export const turnPatch = sqliteTable(
  "turn_patch",
  {
    turnId: text("turn_id")
      .primaryKey()
      .notNull()
      .references(() => turn.id, { onDelete: "cascade" }),
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    turnSequence: integer("turn_sequence").notNull(),
    files: text("files").notNull(),
    patch: text("patch").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    capturedAt: integer("captured_at").notNull(),
    rewoundAt: integer("rewound_at"),
  },
  (table) => [index("turn_patch_session_idx").on(table.sessionId, table.turnSequence)],
);

/**
 * Large values split across rows (spill.ts): the pieces of one value, in order. A row elsewhere
 * holds the marker `"\u0001zc:<id>"` in its place; triggers free the pieces with that row.
 */
export const spilledValue = sqliteTable(
  "spilled_value",
  {
    id: text("id").notNull(),
    ordinal: integer("ordinal").notNull(),
    data: text("data").notNull(),
  },
  (table) => [primaryKey({ columns: [table.id, table.ordinal] })],
);

/** Recorded rewinds: the Turns they took back (JSON ids), which later work no longer sees unless `files_only`. */
export const sessionRewind = sqliteTable(
  "session_rewind",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    turnId: text("turn_id").notNull(),
    turnIds: text("turn_ids").notNull(),
    restored: text("restored").notNull(),
    filesOnly: integer("files_only").notNull(),
    rewoundAt: integer("rewound_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.sessionId, table.rewoundAt, table.turnId] })],
);

export const schema = {
  serverActivity,
  session,
  deletedSession,
  savedPermission,
  turn,
  turnPart,
  turnSteer,
  turnEvent,
  conversationEntry,
  compaction,
  pluginJournal,
  sessionPluginRevision,
  sessionPlugin,
  historyRow,
  sessionDiagnostic,
  sessionContext,
  terminal,
  workspaceBlob,
  workspaceBlobRef,
  workspaceManifest,
  turnTouch,
  turnPatch,
  sessionRewind,
  spilledValue,
};
export type StorageSchema = typeof schema;

export type SessionRow = typeof session.$inferSelect;
export type SessionInsert = typeof session.$inferInsert;
export type DeletedSessionRow = typeof deletedSession.$inferSelect;
export type SavedPermissionRow = typeof savedPermission.$inferSelect;
export type SavedPermissionInsert = typeof savedPermission.$inferInsert;
export type TurnRow = typeof turn.$inferSelect;
export type TurnInsert = typeof turn.$inferInsert;
export type TurnPartRow = typeof turnPart.$inferSelect;
export type TurnSteerRow = typeof turnSteer.$inferSelect;
export type TurnEventRow = typeof turnEvent.$inferSelect;
export type ConversationEntryRow = typeof conversationEntry.$inferSelect;
export type CompactionRow = typeof compaction.$inferSelect;
export type CompactionInsert = typeof compaction.$inferInsert;
export type PluginJournalRow = typeof pluginJournal.$inferSelect;
export type SessionPluginRevisionRow = typeof sessionPluginRevision.$inferSelect;
export type SessionPluginRow = typeof sessionPlugin.$inferSelect;

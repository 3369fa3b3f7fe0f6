/**
 * The drizzle schema. It mirrors, column for column, what the migrations in `migrations/`
 * create; `tests/storage/schema-parity.test.ts` holds the two together. Change the schema by
 * adding a migration *and* editing this file.
 */
import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  sqliteTable,
  text,
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

export const schema = { serverActivity, session, deletedSession, savedPermission };
export type StorageSchema = typeof schema;

export type SessionRow = typeof session.$inferSelect;
export type SessionInsert = typeof session.$inferInsert;
export type DeletedSessionRow = typeof deletedSession.$inferSelect;
export type SavedPermissionRow = typeof savedPermission.$inferSelect;
export type SavedPermissionInsert = typeof savedPermission.$inferInsert;

// The hot repositories' raw rows ↔ the drizzle row types: column names, and the JSON columns
// (stored as text, decoded on read) that drizzle's `mode: "json"` would otherwise handle.
import type { SqlValue } from "./engine.js";
import type { SessionRow, TurnEventRow, TurnPartRow, TurnRow, TurnSteerRow } from "./schema.js";

type Column = readonly [property: keyof TurnRow, column: string, json?: true];

/** Every `turn` column, in table order. */
export const TURN_COLUMNS: readonly Column[] = [
  ["id", "id"],
  ["sessionId", "session_id"],
  ["sequence", "sequence"],
  ["phase", "phase"],
  ["revision", "revision"],
  ["request", "request", true],
  ["attribution", "attribution", true],
  ["model", "model"],
  ["modelLeaseId", "model_lease_id"],
  ["requestOptionsId", "request_options_id"],
  ["providerOptions", "provider_options", true],
  ["messages", "messages", true],
  ["policy", "policy", true],
  ["steeringGate", "steering_gate"],
  ["promotedBatchCount", "promoted_batch_count"],
  ["usage", "usage", true],
  ["contextUse", "context_use", true],
  ["cancellation", "cancellation", true],
  ["outcome", "outcome", true],
  ["acceptedAt", "accepted_at"],
  ["startedAt", "started_at"],
  ["completedAt", "completed_at"],
  ["requestHash", "request_hash"],
  ["ownerProcessId", "owner_process_id"],
  ["ownerInstance", "owner_instance"],
  ["leaseExpiresAt", "lease_expires_at"],
  ["activityCursor", "activity_cursor"],
  ["serverCursor", "server_cursor"],
  ["historyRevision", "history_revision"],
  ["instructions", "instructions", true],
  ["emptyPatchAt", "empty_patch_at"],
  ["preparedRequest", "prepared_request", true],
];

const COLUMN_OF = new Map(TURN_COLUMNS.map(([property, column, json]) => [property, { column, json: json === true }]));

/** `turn`'s columns for a SELECT (optionally qualified by an alias). */
export const TURN_SELECT = TURN_COLUMNS.map(([, column]) => column).join(", ");

/** A stored JSON value: null stays SQL NULL. */
export const jsonValue = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

const parse = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : (value ?? null));

/** The column name and encoded value of one `TurnRow` property. */
export function turnColumn(property: keyof TurnRow, value: unknown): { column: string; value: SqlValue } {
  const spec = COLUMN_OF.get(property);
  if (!spec) throw new Error(`turn has no column for ${String(property)}`);
  if (spec.json) return { column: spec.column, value: jsonValue(value) };
  if (typeof value === "boolean") return { column: spec.column, value: value ? 1 : 0 };
  return { column: spec.column, value: (value ?? null) as SqlValue };
}

export function turnFromRow(raw: Record<string, unknown>): TurnRow {
  const row: Record<string, unknown> = {};
  for (const [property, column, json] of TURN_COLUMNS) row[property] = json ? parse(raw[column]) : (raw[column] ?? null);
  if (row["messages"] === null) row["messages"] = [];
  return row as unknown as TurnRow;
}

export const partFromRow = (raw: Record<string, unknown>): TurnPartRow => ({
  turnId: raw["turn_id"] as string,
  ordinal: raw["ordinal"] as number,
  data: parse(raw["data"]),
});

export const steerFromRow = (raw: Record<string, unknown>): TurnSteerRow => ({
  steerId: raw["steer_id"] as string,
  sessionId: raw["session_id"] as string,
  turnId: raw["turn_id"] as string,
  sequence: raw["sequence"] as number,
  data: parse(raw["data"]),
  requestHash: raw["request_hash"] as string,
});

export const eventFromRow = (raw: Record<string, unknown>): TurnEventRow => ({
  id: raw["id"] as number,
  sessionId: raw["session_id"] as string,
  turnId: raw["turn_id"] as string,
  revision: raw["revision"] as number,
  activityCursor: raw["activity_cursor"] as number,
  serverCursor: raw["server_cursor"] as number,
  type: raw["type"] as string,
  data: parse(raw["data"]),
});

/** `?, ?, …` for `count` placeholders. */
export const placeholders = (count: number): string => Array.from({ length: count }, () => "?").join(", ");

/** Every `session` column, in table order, as a SELECT or RETURNING list. */
export const SESSION_SELECT =
  "id, server, workdir, project_id, title, default_model, system_prompt, agent, forked_from, spawned_from_session_id, configuration_revision, permissions, approval, created_at, updated_at, next_sequence, activity_cursor, server_cursor, create_request_hash, deleting, runner_instance, runner_process_id, runner_lease_expires_at, history_revision, context_use, plugin_overlay";

export function sessionFromRow(raw: Record<string, unknown>): SessionRow {
  const text = (column: string): string | null => (raw[column] as string | null) ?? null;
  const number = (column: string): number | null => (raw[column] as number | null) ?? null;
  return {
    id: raw["id"] as string,
    server: raw["server"] as string,
    workdir: raw["workdir"] as string,
    projectId: raw["project_id"] as string,
    title: text("title"),
    defaultModel: text("default_model"),
    systemPrompt: text("system_prompt"),
    agent: text("agent"),
    forkedFrom: parse(raw["forked_from"]) as SessionRow["forkedFrom"],
    spawnedFromSessionId: text("spawned_from_session_id"),
    configurationRevision: raw["configuration_revision"] as number,
    permissions: parse(raw["permissions"]) as SessionRow["permissions"],
    approval: parse(raw["approval"]) as SessionRow["approval"],
    createdAt: raw["created_at"] as number,
    updatedAt: raw["updated_at"] as number,
    nextSequence: raw["next_sequence"] as number,
    activityCursor: raw["activity_cursor"] as number,
    serverCursor: raw["server_cursor"] as number,
    createRequestHash: text("create_request_hash"),
    deleting: raw["deleting"] === 1 || raw["deleting"] === true,
    runnerInstance: text("runner_instance"),
    runnerProcessId: number("runner_process_id"),
    runnerLeaseExpiresAt: number("runner_lease_expires_at"),
    historyRevision: (raw["history_revision"] as number | undefined) ?? 0,
    contextUse: parse(raw["context_use"]),
    pluginOverlay: raw["plugin_overlay"] === 1 || raw["plugin_overlay"] === true,
  };
}

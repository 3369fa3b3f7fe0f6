// Terminal rows: a PTY's identity and last known state, and its settled display (JSON).
import type { StorageHandle } from "./database.js";
import { mapBusy } from "./errors.js";
import type { TerminalToolOrigin } from "../../generated/client/types.gen.js";
import type { TerminalRow } from "./schema.js";

const SELECT = "id, session_id, command, request_hash, initial_cols, initial_rows, cols, rows, status, exit_code, signal, created_at, exited_at, owner_pid, owner_instance, origin, lease_expires_at";

function fromRow(raw: Record<string, unknown>): Omit<TerminalRow, "display" | "origin"> & { readonly hasDisplay: boolean; readonly origin: TerminalToolOrigin | null } {
  return {
    id: raw["id"] as string,
    sessionId: raw["session_id"] as string,
    command: JSON.parse(raw["command"] as string) as string[],
    requestHash: raw["request_hash"] as string,
    initialCols: raw["initial_cols"] as number,
    initialRows: raw["initial_rows"] as number,
    cols: raw["cols"] as number,
    rows: raw["rows"] as number,
    status: raw["status"] as "running" | "exited",
    exitCode: (raw["exit_code"] as number | null) ?? null,
    signal: (raw["signal"] as string | null) ?? null,
    createdAt: raw["created_at"] as number,
    exitedAt: (raw["exited_at"] as number | null) ?? null,
    ownerPid: raw["owner_pid"] as number,
    ownerInstance: raw["owner_instance"] as string,
    leaseExpiresAt: (raw["lease_expires_at"] as number | null) ?? null,
    hasDisplay: raw["has_display"] === 1,
    origin: typeof raw["origin"] === "string" ? (JSON.parse(raw["origin"]) as TerminalToolOrigin) : null,
  };
}

export type StoredTerminal = ReturnType<typeof fromRow>;
export type NewTerminal = Omit<StoredTerminal, "hasDisplay" | "exitCode" | "signal" | "exitedAt" | "status" | "origin"> & { readonly origin?: TerminalToolOrigin };

const COLUMNS = `${SELECT}, display IS NOT NULL AS has_display`;

export async function insertTerminal(storage: StorageHandle, row: NewTerminal): Promise<StoredTerminal | undefined> {
  return storage.transaction(async (tx) => {
    const raw = await tx.sql.get(
      `INSERT INTO terminal (id, session_id, command, request_hash, initial_cols, initial_rows, cols, rows, status, created_at, owner_pid, owner_instance, origin, lease_expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM session WHERE id = ?2)
       ON CONFLICT (id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [row.id, row.sessionId, JSON.stringify(row.command), row.requestHash, row.initialCols, row.initialRows, row.cols, row.rows, row.createdAt, row.ownerPid, row.ownerInstance, row.origin ? JSON.stringify(row.origin) : null, row.leaseExpiresAt],
    );
    return raw ? fromRow(raw) : undefined;
  });
}

export function getTerminal(storage: StorageHandle, sessionId: string, terminalId: string): Promise<StoredTerminal | undefined> {
  return mapBusy(async () => {
    const raw = await storage.reader().sql.get(`SELECT ${COLUMNS} FROM terminal WHERE session_id = ? AND id = ?`, [sessionId, terminalId]);
    return raw ? fromRow(raw) : undefined;
  });
}

/** The row of `terminalId` in any Session (to tell a reused identity from a new one). */
export function findTerminal(storage: StorageHandle, terminalId: string): Promise<StoredTerminal | undefined> {
  return mapBusy(async () => {
    const raw = await storage.reader().sql.get(`SELECT ${COLUMNS} FROM terminal WHERE id = ?`, [terminalId]);
    return raw ? fromRow(raw) : undefined;
  });
}

export function listTerminals(storage: StorageHandle, sessionId: string): Promise<StoredTerminal[]> {
  return mapBusy(async () => (await storage.reader().sql.all(`SELECT ${COLUMNS} FROM terminal WHERE session_id = ? ORDER BY created_at, id`, [sessionId])).map(fromRow));
}

export function resizeTerminal(storage: StorageHandle, terminalId: string, cols: number, rows: number): Promise<void> {
  return storage.transaction(async (tx) => {
    await tx.sql.run(`UPDATE terminal SET cols = ?, rows = ? WHERE id = ? AND status = 'running'`, [cols, rows, terminalId]);
  });
}

/** Settles a terminal: its exit and its display (null when none could be read). */
export function settleTerminal(
  storage: StorageHandle,
  terminalId: string,
  exit: { readonly exitCode: number | null; readonly signal: string | null; readonly exitedAt: number; readonly display: string | null },
): Promise<void> {
  return storage.transaction(async (tx) => {
    await tx.sql.run(`UPDATE terminal SET status = 'exited', exit_code = ?, signal = ?, exited_at = ?, display = ? WHERE id = ? AND status = 'running'`, [
      exit.exitCode,
      exit.signal,
      exit.exitedAt,
      exit.display,
      terminalId,
    ]);
  });
}

/** Renews the lease of every running terminal `ownerInstance` runs (one statement for all of them). */
export function renewTerminalLeases(storage: StorageHandle, ownerInstance: string, leaseExpiresAt: number): Promise<void> {
  return storage.transaction(async (tx) => {
    await tx.sql.run(`UPDATE terminal SET lease_expires_at = ? WHERE owner_instance = ? AND status = 'running'`, [leaseExpiresAt, ownerInstance]);
  });
}

export function readTerminalDisplay(storage: StorageHandle, terminalId: string): Promise<string | undefined> {
  return mapBusy(async () => ((await storage.reader().sql.get(`SELECT display FROM terminal WHERE id = ?`, [terminalId]))?.["display"] as string | null) ?? undefined);
}

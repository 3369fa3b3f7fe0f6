// Opening a database safely: a file database is created owner-only (0600) before libSQL opens
// it and must carry SQLite's header; failures while opening are named by the file or the
// (redacted) server URL.
import { chmod, open, stat } from "node:fs/promises";
import { StorageNotADatabase, StorageUnreachable, isStorageError, toStorageError } from "./errors.js";
import { redactedServerUrl, type DatabaseLocation } from "./location.js";

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

const errorCode = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** Tightens `path` to 0600 when group or others have any access; a missing file is fine. */
async function ownerOnly(path: string): Promise<void> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return;
    throw error;
  }
  if ((mode & 0o077) === 0) return;
  try {
    await chmod(path, 0o600);
  } catch (error) {
    // Someone else's file, opened on purpose: their mode is theirs to choose.
    if (errorCode(error) !== "EPERM") throw error;
  }
}

/**
 * Readies a database file before libSQL opens it. SQLite creates the -wal and -shm files with
 * the database file's mode, so this decides theirs too: a missing file is created empty with
 * 0600 (`wx`: when another opener wins the race, its file is used), and an existing one (with any
 * -wal/-shm beside it) that group or others can access is tightened to 0600 — wherever it lives,
 * since a path outside the 0700 state directory has no directory to protect it. A non-empty file
 * without the SQLite header is refused before anything is created next to it.
 */
export async function prepareDatabaseFile(path: string): Promise<void> {
  try {
    await (await open(path, "wx", 0o600)).close();
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
  const file = await open(path, "r");
  try {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const { bytesRead } = await file.read(header, 0, header.length, 0);
    if (bytesRead > 0 && !header.equals(SQLITE_HEADER)) throw new StorageNotADatabase(path);
  } finally {
    await file.close();
  }
  for (const companion of [path, `${path}-wal`, `${path}-shm`]) await ownerOnly(companion);
}

/** True when `error` or its cause chain is SQLite's NOTADB (a file with a bad header or encrypted). */
function isNotADatabase(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Object && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const { code, extendedCode } = current as { code?: unknown; extendedCode?: unknown };
    if (code === "SQLITE_NOTADB" || extendedCode === "SQLITE_NOTADB") return true;
  }
  return false;
}

/** The first short upper-case code on `error`'s cause chain (ECONNREFUSED, HRANA_WEBSOCKET_ERROR…). */
function connectionCode(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Object && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const code = errorCode(current);
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
  }
  return null;
}

/**
 * What a failure while opening means: a file that is not a database, or a server that could not
 * be reached (anything but a storage error or an SQLite error from a server is the connection
 * failing), named by path or redacted URL. Busy and migration errors pass through typed.
 */
export function openFailure(error: unknown, location: DatabaseLocation): unknown {
  if (isStorageError(error)) return error;
  if (location.kind === "file" && isNotADatabase(error)) return new StorageNotADatabase(location.path, { cause: error });
  const mapped = toStorageError(error);
  if (mapped !== error || location.kind !== "remote") return mapped;
  const code = connectionCode(error);
  if (code !== null && code.startsWith("SQLITE_")) return error;
  return new StorageUnreachable(redactedServerUrl(location.url), code);
}


/**
 * Typed storage failures. Each is an `Error` (so it carries a stack and prints well) with a
 * literal `_tag` to switch on and a `retryable` flag for the HTTP layer (503 vs 500). Every class
 * extends `storageError(tag, retryable)`, so the tag, name and flag are written once per class.
 */

/** Every storage tag, registered as its class is made: what `isStorageError` recognizes. */
const TAGS = new Set<string>();

/** What every storage error has; `name` is the tag, so a printed error names its kind. */
export interface StorageErrorFields<Tag extends string, Retryable extends boolean> extends Error {
  readonly _tag: Tag;
  readonly retryable: Retryable;
  readonly name: Tag;
}

type StorageErrorBase<Tag extends string, Retryable extends boolean> = new (
  message: string,
  options?: { cause?: unknown },
) => StorageErrorFields<Tag, Retryable>;

/** The base class of one storage error kind. */
function storageError<const Tag extends string, const Retryable extends boolean>(tag: Tag, retryable: Retryable): StorageErrorBase<Tag, Retryable> {
  TAGS.add(tag);
  return class extends Error {
    readonly _tag: Tag = tag;
    readonly retryable: Retryable = retryable;
    override readonly name: Tag = tag;
  };
}

/** The database was locked by another connection or process for longer than the busy timeout. */
export class StorageBusy extends storageError("StorageBusy", true) {}

/** The file is not a SQLite database (so not a Ze Harness one); `path` names it. */
export class StorageNotADatabase extends storageError("StorageNotADatabase", false) {
  constructor(readonly path: string, options?: { cause?: unknown }) {
    super(
      `The database file ${path} is not a SQLite database, so it is not a Ze Harness database. ` +
        `Point --database / ZE_HARNESS_DB at a Ze Harness database, or move the file aside.`,
      options,
    );
  }
}

/**
 * The database file is damaged: SQLite found a malformed image (`SQLITE_CORRUPT`, "database disk
 * image is malformed") — a truncated file, a page overwritten. Not retryable; `path` names it.
 */
export class StorageCorrupt extends storageError("StorageCorrupt", false) {
  constructor(readonly path: string, options?: { cause?: unknown }) {
    super(
      `The database file ${path} is damaged (database disk image is malformed). ` +
        `Restore it from a backup (a migration leaves ${path}.pre-<migration>.bak beside it), or move it aside to start a new one.`,
      options,
    );
  }
}

/**
 * The disk holding the database is full (`SQLITE_FULL`, `ENOSPC`), or the file reached its size
 * cap. Retryable: writes succeed again once space returns; reads go on meanwhile.
 */
export class StorageFull extends storageError("StorageFull", true) {}

/**
 * A libSQL server could not be reached. `url` is the server URL without credentials, query or
 * fragment (where an auth token can ride); `code` the network or client code, when one was given.
 * The underlying error is not attached: its text can repeat the URL with its credentials.
 */
export class StorageUnreachable extends storageError("StorageUnreachable", true) {
  constructor(readonly url: string, readonly code: string | null) {
    super(`Could not reach the libSQL server at ${url}${code !== null ? ` (${code})` : ""}`);
  }
}

/** The database holds tables but no migration ledger (it predates migrations). */
export class StorageResetRequired extends storageError("StorageResetRequired", false) {
  constructor(message: string, readonly tables: readonly string[]) {
    super(message);
  }
}

/** A newer build migrated the database past a breaking migration this build does not know. */
export class StorageNewerThanBinary extends storageError("StorageNewerThanBinary", false) {
  constructor(message: string, readonly unknownMigrations: readonly string[], readonly compatibleFloor: string | null) {
    super(message);
  }
}

/** The ledger's order differs from this build's registry. */
export class StorageMigrationDiverged extends storageError("StorageMigrationDiverged", false) {
  constructor(message: string, readonly ordinal: number, readonly expected: string | null, readonly found: string) {
    super(message);
  }
}

export interface SchemaDrift {
  readonly type: string;
  readonly name: string;
  readonly reason: "missing" | "redefined";
}

/** A schema object a migration left behind was dropped or redefined outside a migration. */
export class StorageSchemaDrifted extends storageError("StorageSchemaDrifted", false) {
  constructor(message: string, readonly drift: readonly SchemaDrift[]) {
    super(message);
  }
}

/** The backup could not be written, a migration threw, or the foreign key check failed. Nothing was migrated. */
export class StorageMigrationFailed extends storageError("StorageMigrationFailed", false) {
  constructor(message: string, readonly migrationId: string | null, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Refusals and failures of the migration runner (all leave the database unchanged). */
export type StorageMigrationFailure =
  | StorageResetRequired
  | StorageNewerThanBinary
  | StorageMigrationDiverged
  | StorageSchemaDrifted
  | StorageMigrationFailed;

/** Failures of opening the database itself, before any schema is read. */
export type StorageOpenFailure = StorageNotADatabase | StorageUnreachable;

export type StorageError = StorageBusy | StorageFull | StorageCorrupt | StorageOpenFailure | StorageMigrationFailure;

const MIGRATION_TAGS: ReadonlySet<string> = new Set<StorageMigrationFailure["_tag"]>([
  "StorageResetRequired",
  "StorageNewerThanBinary",
  "StorageMigrationDiverged",
  "StorageSchemaDrifted",
  "StorageMigrationFailed",
]);

export function isStorageError(error: unknown): error is StorageError {
  return (
    error instanceof Error &&
    typeof (error as { _tag?: unknown })._tag === "string" &&
    TAGS.has((error as unknown as { _tag: string })._tag)
  );
}

export function isStorageMigrationFailure(error: unknown): error is StorageMigrationFailure {
  return isStorageError(error) && MIGRATION_TAGS.has(error._tag);
}

const BUSY_CODE = /^SQLITE_(BUSY|LOCKED)/;
const BUSY_MESSAGE = /SQLITE_(BUSY|LOCKED)|database is locked|database table is locked|database is busy/i;
const FULL_CODE = /^SQLITE_FULL/;
/** The errno codes of a full disk or quota (a WAL sync, a file the host writes). */
const FULL_ERRNO = new Set(["ENOSPC", "EDQUOT"]);
const FULL_MESSAGE = /database or disk is full/i;

/** True when `error` or anything on its `cause` chain (drizzle wraps driver errors) matches `test`. */
function onCauseChain(error: unknown, test: (fields: { code?: unknown; extendedCode?: unknown; message?: unknown }, error: object) => boolean): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== null && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    if (test(current as { code?: unknown; extendedCode?: unknown; message?: unknown }, current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * True when `error` (or anything on its `cause` chain — drizzle wraps driver errors in
 * `DrizzleQueryError`) is SQLite's BUSY or LOCKED, including extended codes such as
 * `SQLITE_BUSY_SNAPSHOT`.
 */
export function isBusyError(error: unknown): boolean {
  return onCauseChain(
    error,
    ({ code, extendedCode, message }, current) =>
      current instanceof StorageBusy ||
      (typeof code === "string" && BUSY_CODE.test(code)) ||
      (typeof extendedCode === "string" && BUSY_CODE.test(extendedCode)) ||
      (typeof message === "string" && BUSY_MESSAGE.test(message)),
  );
}

/** True when `error` (or its cause chain) says the disk is full: `StorageFull`, `SQLITE_FULL`, `ENOSPC`/`EDQUOT`. */
export function isFullError(error: unknown): boolean {
  return onCauseChain(
    error,
    ({ code, extendedCode, message }, current) =>
      current instanceof StorageFull ||
      (typeof code === "string" && (FULL_CODE.test(code) || FULL_ERRNO.has(code))) ||
      (typeof extendedCode === "string" && FULL_CODE.test(extendedCode)) ||
      (typeof message === "string" && FULL_MESSAGE.test(message)),
  );
}

/** True when a later attempt of the same write may succeed: the database was busy or the disk full. */
export const isRetryableStorageError = (error: unknown): boolean => isBusyError(error) || isFullError(error);

/** Maps BUSY/LOCKED failures to `StorageBusy` and a full disk to `StorageFull`; returns every other error unchanged. */
export function toStorageError(error: unknown): unknown {
  if (error instanceof StorageBusy || error instanceof StorageFull) return error;
  const detail = error instanceof Error ? error.message : String(error);
  if (isBusyError(error)) return new StorageBusy(`The database is busy; retry the operation. (${detail})`, { cause: error });
  if (isFullError(error)) return new StorageFull(`The disk holding the database is full; writes fail until space is freed. (${detail})`, { cause: error });
  return error;
}

/** Runs `fn`, rethrowing BUSY/LOCKED failures as `StorageBusy` and a full disk as `StorageFull`. */
export async function mapBusy<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toStorageError(error);
  }
}

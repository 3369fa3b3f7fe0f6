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

export type StorageError = StorageBusy | StorageOpenFailure | StorageMigrationFailure;

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

/**
 * True when `error` (or anything on its `cause` chain — drizzle wraps driver errors in
 * `DrizzleQueryError`) is SQLite's BUSY or LOCKED, including extended codes such as
 * `SQLITE_BUSY_SNAPSHOT`.
 */
export function isBusyError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== null && current !== undefined && !seen.has(current)) {
    seen.add(current);
    if (current instanceof StorageBusy) return true;
    if (typeof current === "object") {
      const { code, extendedCode, message } = current as {
        code?: unknown;
        extendedCode?: unknown;
        message?: unknown;
      };
      if (typeof code === "string" && BUSY_CODE.test(code)) return true;
      if (typeof extendedCode === "string" && BUSY_CODE.test(extendedCode)) return true;
      if (typeof message === "string" && BUSY_MESSAGE.test(message)) return true;
      current = (current as { cause?: unknown }).cause;
    } else {
      return false;
    }
  }
  return false;
}

/** Maps BUSY/LOCKED failures to `StorageBusy`; returns every other error unchanged. */
export function toStorageError(error: unknown): unknown {
  if (error instanceof StorageBusy || !isBusyError(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new StorageBusy(`The database is busy; retry the operation. (${detail})`, { cause: error });
}

/** Runs `fn`, rethrowing BUSY/LOCKED failures as `StorageBusy`. */
export async function mapBusy<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toStorageError(error);
  }
}

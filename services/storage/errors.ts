/**
 * Typed storage failures. Each is an `Error` (so it carries a stack and prints well) with a
 * literal `_tag` to switch on and a `retryable` flag for the HTTP layer (503 vs 500).
 */

/** The database was locked by another connection or process for longer than the busy timeout. */
export class StorageBusy extends Error {
  readonly _tag = "StorageBusy" as const;
  readonly retryable = true as const;
  override readonly name = "StorageBusy";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The database holds tables but no migration ledger (it predates migrations). */
export class StorageResetRequired extends Error {
  readonly _tag = "StorageResetRequired" as const;
  readonly retryable = false as const;
  override readonly name = "StorageResetRequired";
  constructor(
    message: string,
    readonly tables: readonly string[],
  ) {
    super(message);
  }
}

/** A newer build migrated the database past a breaking migration this build does not know. */
export class StorageNewerThanBinary extends Error {
  readonly _tag = "StorageNewerThanBinary" as const;
  readonly retryable = false as const;
  override readonly name = "StorageNewerThanBinary";
  constructor(
    message: string,
    readonly unknownMigrations: readonly string[],
    readonly compatibleFloor: string | null,
  ) {
    super(message);
  }
}

/** The ledger's order differs from this build's registry. */
export class StorageMigrationDiverged extends Error {
  readonly _tag = "StorageMigrationDiverged" as const;
  readonly retryable = false as const;
  override readonly name = "StorageMigrationDiverged";
  constructor(
    message: string,
    readonly ordinal: number,
    readonly expected: string | null,
    readonly found: string,
  ) {
    super(message);
  }
}

export interface SchemaDrift {
  readonly type: string;
  readonly name: string;
  readonly reason: "missing" | "redefined";
}

/** A schema object a migration left behind was dropped or redefined outside a migration. */
export class StorageSchemaDrifted extends Error {
  readonly _tag = "StorageSchemaDrifted" as const;
  readonly retryable = false as const;
  override readonly name = "StorageSchemaDrifted";
  constructor(
    message: string,
    readonly drift: readonly SchemaDrift[],
  ) {
    super(message);
  }
}

/** The backup could not be written, a migration threw, or the foreign key check failed. Nothing was migrated. */
export class StorageMigrationFailed extends Error {
  readonly _tag = "StorageMigrationFailed" as const;
  readonly retryable = false as const;
  override readonly name = "StorageMigrationFailed";
  constructor(
    message: string,
    readonly migrationId: string | null,
    options?: { cause?: unknown },
  ) {
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

export type StorageError = StorageBusy | StorageMigrationFailure;

const TAGS = new Set([
  "StorageBusy",
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
  return isStorageError(error) && error._tag !== "StorageBusy";
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

// Storage faults as the contract's answers, for every operation: a full disk (`SQLITE_FULL`,
// `ENOSPC`/`EDQUOT` — the database's or a file the operation writes) is 503 UnavailableError
// `storage_full`, a database still busy after its timeout is 503 `service_unavailable`; both
// retryable, neither a generic 500. Reads keep working while the disk is full (they need no
// space), so only writes answer this way. Any other error passes through unchanged.
import type { Handlers } from "../../generated/server/routes.js";
import { isFailure, unavailable, type Failure } from "../contract/failure.js";
import { isBusyError, isFullError } from "../storage/index.js";

/** The contract's answer for a storage fault, or undefined for any other error. */
export function storageFailure(error: unknown): Failure | undefined {
  if (isFailure(error)) return undefined;
  if (isFullError(error)) return unavailable("The disk holding the server's data is full: writes fail until space is freed; reads still work.", "storage_full");
  if (isBusyError(error)) return unavailable("The database is busy; retry the request.", "service_unavailable");
  return undefined;
}

/** `handlers` with every operation's storage faults answered as `storageFailure` says. */
export function withStorageFailures<Context>(handlers: Handlers<Context>): Handlers<Context> {
  const wrapped: Record<string, (input: unknown, context: Context) => Promise<unknown>> = {};
  for (const [operationId, handler] of Object.entries(handlers as unknown as Record<string, (input: unknown, context: Context) => Promise<unknown>>)) {
    wrapped[operationId] = async (input, context) => {
      try {
        return await handler.call(handlers, input, context);
      } catch (error) {
        throw storageFailure(error) ?? error;
      }
    };
  }
  return wrapped as unknown as Handlers<Context>;
}

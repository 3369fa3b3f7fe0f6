// Writes a running Turn cannot go on without — its progress and its settlement — outlive a full
// disk or a database busy past its timeout: they are tried again, with a growing pause, until
// they succeed or a signal says to stop trying (the Turn stopped, the host is stopping). A Turn
// therefore waits while the disk is full and goes on once space returns; nothing it recorded in
// memory is dropped meanwhile.
import { isRetryableStorageError } from "../../storage/index.js";

/** First and longest pause between two attempts of a write. */
export const RETRY_FIRST_MS = 50;
export const RETRY_MAX_MS = 1000;

/** Resolves after `ms`, or as soon as one of `signals` aborts. */
function pause(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs `write`; a retryable storage failure (full disk, busy database) is tried again after a
 * pause until it succeeds. Once one of `signals` has aborted, the last failure is thrown instead
 * of trying again. Any other failure is thrown at once.
 */
export async function untilWritten<T>(write: () => Promise<T>, signals: readonly (AbortSignal | undefined)[]): Promise<T> {
  const watched = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
    try {
      return await write();
    } catch (error) {
      if (!isRetryableStorageError(error) || watched.some((signal) => signal.aborted)) throw error;
      await pause(delay, watched);
      if (watched.some((signal) => signal.aborted)) throw error;
    }
  }
}

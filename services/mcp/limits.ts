// Time limits of MCP operations (the config's `limits`: startupMs, catalogMs, executionMs, and the
// host's stdio lifecycle limits). A limit is a number of milliseconds or undefined (unlimited).
import type { Limit } from "../config/types.js";

/** The longest JavaScript timer (2^31 - 1 ms); the SDK's own request timeout is set to it, so only our limits apply. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Milliseconds of a configured limit, undefined when unlimited or absent. */
export const limitMs = (limit: Limit | undefined): number | undefined => (limit?.kind === "finite" ? limit.value : undefined);

export type McpLimitName = "startupMs" | "catalogMs" | "executionMs" | "shutdownMs" | "redirectHops";

/** A configured limit was reached; the operation it bounded failed. */
export class McpLimitReached extends Error {
  readonly _tag = "McpLimitReached" as const;
  constructor(
    readonly limit: McpLimitName,
    readonly value: number,
  ) {
    super(limit === "redirectHops" ? `the redirectHops limit of ${value} redirects was reached` : `the ${limit} limit of ${value} ms was reached`);
    this.name = "McpLimitReached";
  }
}

export const isLimitReached = (error: unknown): error is McpLimitReached =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "McpLimitReached";

/**
 * Runs `work` with a signal that aborts when `outer` aborts or after `ms` (then the call rejects
 * with {@link McpLimitReached}). Settles as soon as either happens, even when `work` ignores its
 * signal; the timer never outlives the call.
 */
export async function bounded<T>(
  work: (signal: AbortSignal) => Promise<T>,
  options: { readonly ms: number | undefined; readonly limit: McpLimitName; readonly signal?: AbortSignal | undefined },
): Promise<T> {
  const controller = new AbortController();
  const { ms, limit, signal: outer } = options;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    if (ms !== undefined) {
      timer = setTimeout(() => {
        // Settle first, so the race reports the limit rather than the work's reaction to the abort.
        const reached = new McpLimitReached(limit, ms);
        reject(reached);
        controller.abort(reached);
      }, Math.min(ms, MAX_TIMER_MS));
    }
    if (outer) {
      onAbort = () => {
        reject(outer.reason instanceof Error ? outer.reason : new DOMException("The operation was aborted.", "AbortError"));
        controller.abort(outer.reason);
      };
      if (outer.aborted) onAbort();
      else outer.addEventListener("abort", onAbort, { once: true });
    }
  });
  stopped.catch(() => undefined);
  try {
    return await Promise.race([work(controller.signal), stopped]);
  } finally {
    if (timer) clearTimeout(timer);
    if (outer && onAbort) outer.removeEventListener("abort", onAbort);
  }
}

// Model discovery over the generated SDK: the runtime model snapshot and the snapshot a Session
// adopted (`getRuntimeModels`, `getSessionModels`), a single-shot revision check of each
// (`runtimeModelsRevision`, `sessionModelsRevision`: the server emits the present `hostRevision`
// once on `…/models/events` and closes), and watches that repeat that check (`watchRuntimeModels`,
// `watchSessionModels`): each reconnects, and fetches the snapshot again whenever the revision is
// new. A transport failure or a 5xx is retried with backoff; a 4xx or a malformed event is final.
import * as sdk from "../generated/client/sdk.gen.js";
import type { CatalogSnapshot, ModelRevisionEvent } from "../generated/client/types.gen.js";
import { refusalBody, unwrap, ZeClientError, type ZeClient } from "./client.js";

/** The one server name a local host serves (`--server` defaults to it). */
const LOCAL_SERVER = "local";

export interface SessionModelsTarget {
  readonly sessionId: string;
  /** Default `local`. */
  readonly server?: string | undefined;
}

/** A Session ID (on the `local` server) or a `{ sessionId, server }` target. */
export type SessionModelsRef = string | SessionModelsTarget;

const targetOf = (ref: SessionModelsRef): { server: string; sessionId: string } =>
  typeof ref === "string" ? { server: LOCAL_SERVER, sessionId: ref } : { server: ref.server ?? LOCAL_SERVER, sessionId: ref.sessionId };

/** The runtime model catalog: providers with availability, models, `defaultModel`, `hostRevision`. */
export function getRuntimeModels(client: ZeClient): Promise<CatalogSnapshot> {
  return unwrap(sdk.models({ client: client.client }));
}

/** The catalog snapshot a Session adopted (its running Turn's, else the runtime snapshot). */
export function getSessionModels(client: ZeClient, target: SessionModelsRef): Promise<CatalogSnapshot> {
  return unwrap(sdk.sessionModels({ client: client.client, path: targetOf(target) }));
}

type SseCall = (options: { fetch: typeof fetch; signal: AbortSignal; sseMaxRetryAttempts: number; onSseError: (error: unknown) => void }) => Promise<{ stream: AsyncGenerator<unknown> }>;

/** Reads the single `models.revision` event of one stream. */
async function revisionOnce(client: ZeClient, open: SseCall, signal?: AbortSignal): Promise<string> {
  const baseFetch = client.client.getConfig().fetch ?? globalThis.fetch;
  let refused: ZeClientError | undefined;
  let streamError: unknown;
  const capture = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await baseFetch(input, init);
    if (!response.ok) {
      const body = await refusalBody(response);
      refused = new ZeClientError(response.status, body);
    }
    return response;
  }) as typeof fetch;
  const connection = new AbortController();
  const abort = (): void => connection.abort(signal?.reason);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    const { stream } = await open({ fetch: capture, signal: connection.signal, sseMaxRetryAttempts: 1, onSseError: (error) => (streamError ??= error) });
    for await (const event of stream) {
      const revision = event as ModelRevisionEvent;
      if (revision?.type === "models.revision" && typeof revision.hostRevision === "string") return revision.hostRevision;
      throw new ZeClientError(0, { _tag: "InvalidResponse", message: "A model revision stream sent an event that is not models.revision" });
    }
  } finally {
    signal?.removeEventListener("abort", abort);
    connection.abort();
  }
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException("aborted", "AbortError");
  if (refused) throw refused;
  if (streamError instanceof Error && streamError.name === "ZodError") {
    throw new ZeClientError(0, { _tag: "InvalidResponse", message: `An event does not match the contract: ${streamError.message}` });
  }
  const reason = streamError instanceof Error ? streamError.message : streamError !== undefined ? String(streamError) : "the stream ended without a revision";
  throw new ZeClientError(0, { _tag: "TransportError", message: reason });
}

/** The runtime catalog's present revision (one single-shot `modelEvents` stream). */
export function runtimeModelsRevision(client: ZeClient, options: { readonly signal?: AbortSignal } = {}): Promise<string> {
  return revisionOnce(client, (call) => sdk.modelEvents({ client: client.client, ...call }) as ReturnType<SseCall>, options.signal);
}

/** The present revision a Session adopted (one single-shot `sessionModelEvents` stream). */
export function sessionModelsRevision(client: ZeClient, target: SessionModelsRef, options: { readonly signal?: AbortSignal } = {}): Promise<string> {
  const path = targetOf(target);
  return revisionOnce(client, (call) => sdk.sessionModelEvents({ client: client.client, path, ...call }) as ReturnType<SseCall>, options.signal);
}

export interface WatchModelsOptions {
  /** Ends the watch (it then resolves). */
  readonly signal?: AbortSignal | undefined;
  /** Each snapshot with a revision the watch has not seen yet (first: the present one). Awaited. */
  readonly onSnapshot: (snapshot: CatalogSnapshot) => void | Promise<void>;
  /** The revision the caller already holds: no snapshot is fetched until the revision differs. */
  readonly knownRevision?: string | undefined;
  /** The pause between revision checks (default 5 s). */
  readonly intervalMs?: number | undefined;
  /** The first retry delay after a failed check (default 250 ms), doubled per consecutive failure up to `maxRetryDelayMs` (default 5 s). */
  readonly retryDelayMs?: number | undefined;
  readonly maxRetryDelayMs?: number | undefined;
  /** Consecutive failed checks before the watch gives up and rejects (default 10). */
  readonly maxAttempts?: number | undefined;
}

const retryable = (error: unknown): boolean =>
  error instanceof ZeClientError && (error.status === 0 ? error.body._tag === "TransportError" : error.status >= 500 || error.status === 408 || error.status === 429);

const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

async function watchModels(revision: () => Promise<string>, snapshot: () => Promise<CatalogSnapshot>, options: WatchModelsOptions): Promise<void> {
  const signal = options.signal;
  let known = options.knownRevision;
  let failures = 0;
  while (!signal?.aborted) {
    try {
      const present = await revision();
      if (present !== known) {
        const fresh = await snapshot();
        known = fresh.hostRevision;
        await options.onSnapshot(fresh);
      }
      failures = 0;
      await pause(options.intervalMs ?? 5_000, signal);
    } catch (error) {
      if (signal?.aborted) return;
      if (!retryable(error)) throw error;
      failures += 1;
      if (failures >= (options.maxAttempts ?? 10)) throw error;
      await pause(Math.min((options.retryDelayMs ?? 250) * 2 ** (failures - 1), options.maxRetryDelayMs ?? 5_000), signal);
    }
  }
}

/** Follows the runtime catalog until `signal` aborts: `onSnapshot` gets every new revision's snapshot. */
export function watchRuntimeModels(client: ZeClient, options: WatchModelsOptions): Promise<void> {
  return watchModels(
    () => runtimeModelsRevision(client, options.signal !== undefined ? { signal: options.signal } : {}),
    () => getRuntimeModels(client),
    options,
  );
}

/** Follows the catalog a Session adopted until `signal` aborts. */
export function watchSessionModels(client: ZeClient, target: SessionModelsRef, options: WatchModelsOptions): Promise<void> {
  return watchModels(
    () => sessionModelsRevision(client, target, options.signal !== undefined ? { signal: options.signal } : {}),
    () => getSessionModels(client, target),
    options,
  );
}

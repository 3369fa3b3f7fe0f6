// Longer than ~400 lines on purpose: the three watches share one reconnect loop and one Turn
// reconciliation, and reading them side by side is how their resume rules stay the same.
// Long-lived watches over the generated SSE operations (`watchTurn`, `watchSession`,
// `watchServer`): every event is validated by the SDK's zod schema; a transport failure, a
// 5xx, a body cut mid-stream or three missed heartbeats (45 s without any event) reconnect
// with backoff and resume after the last durable cursor (query cursor + Last-Event-ID).
// A 4xx or a malformed event is final. `watchTurn` also keeps the Turn itself: deltas are
// applied by offset, durable events patch it, and only a newer snapshot replaces it.
import * as sdk from "../generated/client/sdk.gen.js";
import type {
  ServerStreamEvent,
  SessionStreamEvent,
  ToolTurnPart,
  Turn,
  TurnPart,
  TurnStreamEvent,
} from "../generated/client/types.gen.js";
import { refusalBody, unwrap, ZeClientError, type EncodedErrorBody, type ZeClient } from "./client.js";

/** Servers send an event at least this often on every stream. */
export const HEARTBEAT_MS = 15_000;

export interface WatchOptions {
  readonly signal?: AbortSignal | undefined;
  /** A connection without any event for this long is lost (default 3 × 15 s). */
  readonly idleTimeoutMs?: number | undefined;
  /** The first reconnect delay (default 250 ms), doubled per consecutive failure up to `maxRetryDelayMs` (default 5 s). */
  readonly retryDelayMs?: number | undefined;
  readonly maxRetryDelayMs?: number | undefined;
  /** Consecutive failed connections (no event received) before the watch gives up (default 10). */
  readonly maxAttempts?: number | undefined;
}

/** Why and when a watch reconnects. */
export interface Reconnecting {
  readonly error: ZeClientError;
  readonly delayMs: number;
  /** 1 for the first retry after a working connection. */
  readonly attempt: number;
}

// ---------------------------------------------------------------------------------------------
// The reconnect loop shared by the three watches

export type StreamCall = (options: {
  fetch: typeof fetch;
  signal: AbortSignal;
  onSseError: (error: unknown) => void;
  sseMaxRetryAttempts: number;
}) => Promise<{ stream: AsyncGenerator<unknown, unknown, unknown> }>;

export interface Follow<E, C = number> {
  /** Opens one connection after the watch's current cursor. */
  readonly open: (cursor: C | undefined) => StreamCall;
  readonly cursor: () => C | undefined;
  /** Handles one validated event; `true` ends the watch. */
  readonly onEvent: (event: E) => boolean | Promise<boolean>;
  readonly onConnected?: () => void;
  readonly onReconnecting?: (info: Reconnecting) => void;
}

const isRetryableStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429;

function transportError(message: string): ZeClientError {
  return new ZeClientError(0, { _tag: "TransportError", message });
}

/** Resolves true when the watch ended by its `onEvent`, false when `signal` aborted it. */
export async function follow<E, C = number>(client: ZeClient, options: WatchOptions, spec: Follow<E, C>): Promise<boolean> {
  const signal = options.signal;
  const idleMs = options.idleTimeoutMs ?? 3 * HEARTBEAT_MS;
  const maxAttempts = options.maxAttempts ?? 10;
  const baseFetch = client.client.getConfig().fetch ?? globalThis.fetch;
  let failures = 0;
  for (;;) {
    if (signal?.aborted) return false;
    const connection = new AbortController();
    const abort = (): void => connection.abort();
    signal?.addEventListener("abort", abort, { once: true });
    let refused: { status: number; body: EncodedErrorBody } | undefined;
    let streamError: unknown;
    let idle = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => ((idle = true), connection.abort()), idleMs);
    };
    // Sees the response, so a refusal keeps its status and encoded error body.
    const capture = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await baseFetch(input, init);
      if (!response.ok) {
        const body = await refusalBody(response);
        refused = { status: response.status, body };
      } else spec.onConnected?.();
      return response;
    }) as typeof fetch;
    try {
      arm();
      const { stream } = await spec.open(spec.cursor())({
        fetch: capture,
        signal: connection.signal,
        onSseError: (error) => (streamError ??= error),
        sseMaxRetryAttempts: 1,
      });
      for await (const event of stream) {
        arm();
        failures = 0;
        if (await spec.onEvent(event as E)) return true;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      connection.abort();
    }
    if (signal?.aborted) return false;
    // Classify why the connection ended.
    let error: ZeClientError;
    if (refused) {
      error = new ZeClientError(refused.status, refused.body);
      if (!isRetryableStatus(refused.status)) throw error;
    } else if (streamError instanceof Error && streamError.name === "ZodError") {
      throw new ZeClientError(0, { _tag: "InvalidResponse", message: `An event does not match the contract: ${streamError.message}` });
    } else if (idle) {
      error = transportError(`No event for ${idleMs} ms: the connection is lost`);
    } else if (streamError !== undefined) {
      error = transportError(streamError instanceof Error ? streamError.message : String(streamError));
    } else {
      error = transportError("The stream ended early");
    }
    failures += 1;
    if (failures >= maxAttempts) throw error;
    const delayMs = Math.min((options.retryDelayMs ?? 250) * 2 ** (failures - 1), options.maxRetryDelayMs ?? 5_000);
    spec.onReconnecting?.({ error, delayMs, attempt: failures });
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(wait);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const wait = setTimeout(done, delayMs);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}

/** `signal`'s reason as a thrown error (an AbortError unless the caller gave one). */
function aborted(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("The watch was aborted", "AbortError");
}

// ---------------------------------------------------------------------------------------------
// Turn

/** A Turn stream event as `watchTurn` forwards it (heartbeats are consumed). */
export type TurnWatchEvent = Exclude<TurnStreamEvent, { type: "turn.heartbeat" }>;

type DeltaEvent = Extract<TurnStreamEvent, { type: "turn.text.delta" | "turn.reasoning.delta" | "turn.refusal.delta" }>;
type StreamedPart = Extract<TurnPart, { type: "text" | "reasoning" | "refusal" }>;

export interface WatchTurnOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  readonly turnId: string;
  /** Resume after this revision: durable events after it are replayed after the snapshot. */
  readonly afterRevision?: number | undefined;
  /** Every event but heartbeats, with the held Turn after reconciling the event. Not awaited. */
  readonly onEvent?: ((event: TurnWatchEvent, turn: Turn) => void) | undefined;
  readonly onReconnecting?: ((info: Reconnecting) => void) | undefined;
}

const isStreamed = (part: TurnPart): part is StreamedPart => part.type === "text" || part.type === "reasoning" || part.type === "refusal";

/** Applies a delta by offset: text already held is skipped, a gap waits for the next snapshot. */
function applyDelta(turn: Turn, event: DeltaEvent): void {
  const kind = event.type === "turn.text.delta" ? "text" : event.type === "turn.reasoning.delta" ? "reasoning" : "refusal";
  const index = turn.parts.findIndex((part) => part.id === event.partId);
  if (index < 0) {
    if (event.offset === 0) turn.parts.push({ type: kind, id: event.partId, assistantMessageIndex: event.assistantMessageIndex, text: event.delta });
    return;
  }
  const part = turn.parts[index]!;
  if (!isStreamed(part) || part.type !== kind) return;
  const end = event.offset + event.delta.length;
  if (event.offset > part.text.length || end <= part.text.length) return;
  turn.parts[index] = { ...part, text: part.text.slice(0, event.offset) + event.delta };
}

/** A newer snapshot replaces the Turn, keeping streamed text the snapshot has not caught up with. */
function replaceWith(held: Turn | undefined, next: Turn): Turn {
  const turn = structuredClone(next);
  if (!held) return turn;
  turn.parts = turn.parts.map((part) => {
    const old = held.parts.find((candidate) => candidate.id === part.id);
    return old && isStreamed(part) && isStreamed(old) && old.text.length > part.text.length && old.text.startsWith(part.text) ? { ...part, text: old.text } : part;
  });
  return turn;
}

function upsertPart(turn: Turn, part: TurnPart): void {
  const index = turn.parts.findIndex((candidate) => candidate.id === part.id);
  if (index < 0) turn.parts.push(structuredClone(part));
  else turn.parts[index] = structuredClone(part);
}

function patchTool(turn: Turn, partId: string, patch: (part: ToolTurnPart) => ToolTurnPart): void {
  const index = turn.parts.findIndex((candidate) => candidate.id === partId);
  const part = turn.parts[index];
  if (part?.type === "tool") turn.parts[index] = patch(part);
}

/** Applies a durable event newer than the held Turn. */
function applyDurable(turn: Turn, event: TurnWatchEvent): void {
  switch (event.type) {
    case "turn.started":
      Object.assign(turn, { phase: "running", model: event.model, startedAt: event.startedAt });
      break;
    case "turn.tool.requested":
    case "turn.tool.completed":
    case "turn.steered":
      upsertPart(turn, event.part);
      break;
    case "turn.tool.activity":
      patchTool(turn, event.partId, (part) => (part.activity && part.activity.checkpoint >= event.activity.checkpoint ? part : { ...part, activity: event.activity }));
      break;
    case "turn.approval.requested":
      patchTool(turn, event.partId, (part) => ({ ...part, approval: { state: "pending", request: event.request, requestedAt: event.requestedAt } }));
      break;
    case "turn.approval.resolved":
      patchTool(turn, event.partId, (part) => {
        if (part.approval.state === "none") return part;
        const { request, requestedAt } = part.approval;
        const { decision, source, reply, replyMessage, resolvedAt } = event;
        return {
          ...part,
          approval: { state: "resolved", request, requestedAt, resolvedAt, decision, source, ...(reply !== undefined ? { reply } : {}), ...(replyMessage !== undefined ? { replyMessage } : {}) },
        };
      });
      break;
    case "turn.question.asked":
      patchTool(turn, event.partId, (part) => ({ ...part, question: { state: "pending", request: event.request, requestedAt: event.requestedAt } }));
      break;
    case "turn.question.replied":
    case "turn.question.rejected":
      patchTool(turn, event.partId, (part) => {
        if (!part.question) return part;
        const { request, requestedAt } = part.question;
        return {
          ...part,
          question:
            event.type === "turn.question.replied"
              ? { state: "answered", request, requestedAt, resolvedAt: event.resolvedAt, answers: event.answers }
              : { state: "dismissed", request, requestedAt, resolvedAt: event.resolvedAt },
        };
      });
      break;
    default:
      return;
  }
  turn.revision = event.revision;
}

/**
 * Follows a Turn to its `turn.finished` and resolves with the final Turn (rejects with a
 * ZeClientError on a final failure, or the abort reason when `signal` aborts).
 */
export async function watchTurn(client: ZeClient, options: WatchTurnOptions): Promise<Turn> {
  const path = { server: options.server, sessionId: options.sessionId, turnId: options.turnId };
  let cursor = options.afterRevision;
  let held: Turn | undefined;
  /** The revision of the newest snapshot applied (what the held Turn is authoritative through). */
  let snapshotRevision = -1;
  let final: Turn | undefined;
  const read = async (): Promise<Turn> => (await unwrap(sdk.getTurn({ client: client.client, path }))).turn;
  const ended = await follow<TurnStreamEvent>(client, options, {
    cursor: () => cursor,
    open: (after) => (extra) =>
      sdk.watchTurn({
        client: client.client,
        path,
        ...(after !== undefined ? { query: { afterRevision: String(after) }, headers: { "last-event-id": String(after) } } : {}),
        ...extra,
      }),
    ...(options.onReconnecting ? { onReconnecting: options.onReconnecting } : {}),
    onEvent: async (event) => {
      if (event.type === "turn.heartbeat") {
        cursor = Math.max(cursor ?? 0, event.revision);
        return false;
      }
      if (event.type === "turn.snapshot") {
        if (!held || event.turn.revision > held.revision) {
          held = replaceWith(held, event.turn);
          snapshotRevision = event.turn.revision;
        }
      } else if (event.type === "turn.text.delta" || event.type === "turn.reasoning.delta" || event.type === "turn.refusal.delta") {
        if (held) applyDelta(held, event);
      } else if (event.type === "turn.finished") {
        // The outcome is committed without a snapshot: read the final state unless one covers it.
        held = snapshotRevision >= event.revision && held?.outcome ? held : replaceWith(held, await read());
        final = held;
      } else if (held && event.revision > held.revision) {
        applyDurable(held, event);
      }
      // Deltas build on a revision whose durable events may still be on their way: only
      // durable events move the resume cursor.
      if (!event.type.endsWith(".delta")) cursor = Math.max(cursor ?? 0, event.revision);
      held ??= await read();
      options.onEvent?.(event, held);
      return final !== undefined;
    },
  });
  if (!ended || !final) throw aborted(options.signal);
  return final;
}

// ---------------------------------------------------------------------------------------------
// Session

export type SessionWatchLifecycle =
  | ({ readonly type: "session.reconnecting" } & Reconnecting)
  /** The resumed stream caught up (its first `session.cursor` after a reconnect). */
  | { readonly type: "session.resumed"; readonly activityCursor: number };

export interface WatchSessionOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  /** Start after this activity cursor (0: from the beginning). */
  readonly afterActivityCursor: number;
  /** Not awaited. */
  readonly onEvent: (event: SessionStreamEvent) => void;
  readonly onLifecycle?: ((event: SessionWatchLifecycle) => void) | undefined;
}

/** Follows a Session until `signal` aborts (then resolves); rejects with a ZeClientError on a final failure. */
export async function watchSession(client: ZeClient, options: WatchSessionOptions): Promise<void> {
  let cursor = options.afterActivityCursor;
  let resuming = false;
  await follow<SessionStreamEvent>(client, options, {
    cursor: () => cursor,
    open: (after) => (extra) =>
      sdk.watchSession({
        client: client.client,
        path: { server: options.server, sessionId: options.sessionId },
        query: { afterActivityCursor: String(after ?? 0) },
        headers: { "last-event-id": String(after ?? 0) },
        ...extra,
      }),
    onReconnecting: (info) => {
      resuming = true;
      options.onLifecycle?.({ type: "session.reconnecting", ...info });
    },
    onEvent: (event) => {
      // Live deltas carry the cursor of the activity they follow, which may not have arrived yet.
      if (!event.type.endsWith(".delta")) cursor = Math.max(cursor, event.activityCursor);
      if (event.type === "session.cursor" && resuming) {
        resuming = false;
        options.onLifecycle?.({ type: "session.resumed", activityCursor: event.activityCursor });
      }
      options.onEvent(event);
      return false;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Server

/** The server stream's events plus `server.ready`, first, with the cursor the stream starts at. */
export type ServerWatchEvent = ServerStreamEvent | { readonly type: "server.ready"; readonly serverCursor: number };

export type ServerWatchLifecycle =
  | ({ readonly type: "server.reconnecting" } & Reconnecting)
  /** The stream reopened after the last cursor seen. */
  | { readonly type: "server.resumed"; readonly serverCursor: number | undefined };

export interface WatchServerOptions extends WatchOptions {
  readonly server: string;
  /** Replay every stamped row after this cursor; absent: start live at the current cursor. */
  readonly afterServerCursor?: number | undefined;
  /** Not awaited. */
  readonly onEvent: (event: ServerWatchEvent) => void;
  readonly onLifecycle?: ((event: ServerWatchLifecycle) => void) | undefined;
}

/** Follows a server until `signal` aborts (then resolves); rejects with a ZeClientError on a final failure. */
export async function watchServer(client: ZeClient, options: WatchServerOptions): Promise<void> {
  let cursor = options.afterServerCursor;
  let ready = false;
  let resuming = false;
  await follow<ServerStreamEvent>(client, options, {
    cursor: () => cursor,
    open: (after) => (extra) =>
      sdk.watchServer({
        client: client.client,
        path: { server: options.server },
        ...(after !== undefined ? { query: { afterServerCursor: String(after) }, headers: { "last-event-id": String(after) } } : {}),
        ...extra,
      }),
    onConnected: () => {
      if (!resuming) return;
      resuming = false;
      options.onLifecycle?.({ type: "server.resumed", serverCursor: cursor });
    },
    onReconnecting: (info) => {
      resuming = true;
      options.onLifecycle?.({ type: "server.reconnecting", ...info });
    },
    onEvent: (event) => {
      if (!ready) {
        ready = true;
        // A live start announces its cursor with the first `server.cursor`.
        const start = event.type === "server.cursor" ? event.serverCursor : (cursor ?? event.serverCursor);
        options.onEvent({ type: "server.ready", serverCursor: start });
        cursor = Math.max(cursor ?? 0, event.serverCursor);
        if (event.type === "server.cursor") return false;
      }
      cursor = Math.max(cursor ?? 0, event.serverCursor);
      options.onEvent(event);
      return false;
    },
  });
}

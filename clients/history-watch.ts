// Resumable watches over the workspace history streams, on the shared reconnect loop of
// `watch.ts` (validated events, backoff, three missed heartbeats = lost):
// - `watchHistory`: rows, queue and pending-interaction updates; every reconnect resumes after
//   the last row received (`nextAfter`, as query and Last-Event-ID), so no row is delivered twice
//   and none is missed; the queue and interactions are re-sent in full on each connection.
// - `watchDiagnostics`: the current diagnostic revision on every (re)subscription and change;
//   a consumer rereads the latest diagnostics page when the revision moves.
import * as sdk from "../generated/client/sdk.gen.js";
import type { HistoryPosition, HistoryStreamEvent } from "../generated/client/types.gen.js";
import type { ZeClient } from "./client.js";
import { follow, type Reconnecting, type WatchOptions } from "./watch.js";

export interface WatchHistoryOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  /** Resume after this row (the last `nextAfter` seen); from the start when absent. */
  readonly after?: HistoryPosition | undefined;
  /** Every event but the caught-up `history.cursor` repeats. Not awaited. */
  readonly onEvent: (event: HistoryStreamEvent) => void;
  readonly onReconnecting?: ((info: Reconnecting) => void) | undefined;
}

/** Follows a Session's history until `signal` aborts (resolves) or the server refuses (throws). Resolves the last position delivered. */
export async function watchHistory(client: ZeClient, options: WatchHistoryOptions): Promise<HistoryPosition | undefined> {
  let position = options.after;
  let through: number | undefined;
  await follow<HistoryStreamEvent, HistoryPosition>(client, options, {
    cursor: () => position,
    open: (after) => (extra) =>
      sdk.watchHistory({
        client: client.client,
        path: { server: options.server, sessionId: options.sessionId },
        ...(after !== undefined
          ? { query: { afterSourceSequence: String(after.sourceSequence), afterItemIndex: String(after.itemIndex) }, headers: { "last-event-id": `${after.sourceSequence}.${after.itemIndex}` } }
          : {}),
        ...extra,
      }),
    ...(options.onReconnecting ? { onReconnecting: options.onReconnecting } : {}),
    onEvent: (event) => {
      if (event.type === "history.rows") position = event.nextAfter;
      if (event.type === "history.cursor") {
        if (event.through === through) return false;
        through = event.through;
      }
      options.onEvent(event);
      return false;
    },
  });
  return position;
}

export interface WatchDiagnosticsOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  /** Each new revision (the first on every subscription). Not awaited. */
  readonly onRevision: (revision: number) => void;
  readonly onReconnecting?: ((info: Reconnecting) => void) | undefined;
}

/** Follows a Session's diagnostic revision until `signal` aborts; repeated revisions are dropped. */
export async function watchDiagnostics(client: ZeClient, options: WatchDiagnosticsOptions): Promise<void> {
  let revision: number | undefined;
  await follow<{ type: "diagnostics.revision"; revision: number }, never>(client, options, {
    cursor: () => undefined,
    open: () => (extra) => sdk.watchDiagnostics({ client: client.client, path: { server: options.server, sessionId: options.sessionId }, ...extra }),
    ...(options.onReconnecting ? { onReconnecting: options.onReconnecting } : {}),
    onEvent: (event) => {
      if (event.revision !== revision) {
        revision = event.revision;
        options.onRevision(event.revision);
      }
      return false;
    },
  });
}

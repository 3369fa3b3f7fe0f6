// The three watch streams, projected from the durable event log plus live deltas:
// - Turn: current snapshot, durable events after `afterRevision`, then live until `turn.finished`;
// - Session: durable events after an activity cursor (wrapped as `session.turn.*`), live
//   deltas, `session.cursor` when caught up and at least every heartbeat while idle;
// - Server: Session created/title/deleted and Turn events after a server cursor, or live from
//   the announced `server.cursor`.
// Each message's SSE `id` is its stream's cursor, so a reconnect with Last-Event-ID misses nothing.
import type {
  ServerStreamEvent,
  Session,
  SessionStreamEvent,
  Turn,
  TurnStreamEvent,
} from "../../../generated/client/types.gen.js";
import type { SseMessage } from "../../../generated/server/routes.js";
import {
  getSession,
  listDeletedSessions,
  listSessionsStampedAfter,
  readServerCursor,
  turns as store,
  type StorageHandle,
  type TurnEventRow,
} from "../../storage/index.js";
import { notFound, validationFailure } from "../../contract/failure.js";
import { toSession } from "../sessions.js";
import { toTurn } from "../turns/codec.js";
import { stringChars } from "../../contract/string-chars.js";
import { pumpedStream, type ChannelBounds } from "./channel.js";
import type { ActivityHub, LiveDelta } from "./hub.js";
import { EventInbox, LiveOrder } from "./stream-order.js";

export interface StreamTiming {
  /** A quiet stream repeats its cursor (or heartbeat) at least this often. */
  readonly heartbeatMs: number;
  /** How often an idle stream re-reads storage (recovers changes made by other processes). */
  readonly idleReadMs: number;
  /** How far a reader may fall behind (channel.ts); DEFAULT_CHANNEL_BOUNDS when absent. */
  readonly queue?: ChannelBounds | undefined;
}

export const DEFAULT_STREAM_TIMING: StreamTiming = { heartbeatMs: 15_000, idleReadMs: 1_000 };

/** Durable events a Turn stream's replay reads at a time. */
const REPLAY_PAGE = 500;

/** Event types that stay on the per-Session stream only. */
const DELTA_TYPES = new Set(["turn.text.delta", "turn.reasoning.delta", "turn.refusal.delta"]);

export function parseCursor(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value)) throw validationFailure(`Invalid request: ${name} must be a non-negative integer`);
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw validationFailure(`Invalid request: ${name} is too large`);
  return parsed;
}

type AnyEvent = { type: string } & Record<string, unknown>;

const message = <E extends AnyEvent>(event: E, id: number): SseMessage<E> => ({ event: event.type, id: String(id), data: event });

export class EventStreams {
  constructor(
    private readonly storage: StorageHandle,
    private readonly hub: ActivityHub,
    private readonly timing: StreamTiming = DEFAULT_STREAM_TIMING,
  ) {}

  private async turn(turnId: string): Promise<Turn | undefined> {
    const found = await store.getTurnWithParts(this.storage, turnId);
    return found ? toTurn(found.turn, found.parts, found.steers) : undefined;
  }

  private async requireSession(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }


  // -------------------------------------------------------------------------
  // Turn stream

  async watchTurn(server: string, sessionId: string, turnId: string, afterRevision: number | undefined, signal?: AbortSignal): Promise<AsyncIterable<SseMessage<TurnStreamEvent>>> {
    // One read finds the Turn in the Session on this server; only a miss asks which is missing.
    const found = await store.getTurnWithParts(this.storage, turnId, { server, sessionId });
    if (!found) {
      await this.requireSession(server, sessionId);
      throw notFound("turn", `Turn ${turnId} does not exist`);
    }
    const first = toTurn(found.turn, found.parts, found.steers);
    const timing = this.timing;
    const inbox = new EventInbox();
    const live = new LiveOrder<SseMessage<TurnStreamEvent>>(first.revision);
    return pumpedStream<SseMessage<TurnStreamEvent>>(
      async (channel, wake) => {
        const send = (event: AnyEvent, revision: number): void => channel.push(message(event, revision) as SseMessage<TurnStreamEvent>, stringChars(event));
        let snapshot = first;
        let sent = snapshot.revision;
        send({ type: "turn.snapshot", revision: snapshot.revision, turn: snapshot }, snapshot.revision);
        let finished = false;
        // Every durable event after `after` through `through`, a page at a time (a long Turn has
        // thousands: the first page alone left the rest unsent), waiting for room between pages.
        const replay = async (after: number, through: number): Promise<void> => {
          let cursor = after;
          while (cursor < through) {
            await channel.room();
            if (channel.isClosed) return;
            const rows = await store.listTurnEvents(this.storage, turnId, cursor, REPLAY_PAGE);
            for (const row of rows) {
              if (row.revision > through) return;
              cursor = row.revision;
              if (row.type === "turn.snapshot") continue;
              send({ type: row.type, revision: row.revision, ...(row.data as object) }, row.revision);
              if (row.type === "turn.finished") finished = true;
            }
            if (rows.length < REPLAY_PAGE) return;
          }
        };
        if (afterRevision !== undefined && afterRevision < snapshot.revision) await replay(afterRevision, snapshot.revision);
        if (!finished && snapshot.outcome && snapshot.completedAt !== undefined) {
          send({ type: "turn.finished", revision: snapshot.revision, outcome: snapshot.outcome, completedAt: snapshot.completedAt }, snapshot.revision);
          finished = true;
        }
        let lastSentAt = Date.now();
        while (!finished && !channel.isClosed) {
          // A reader that stopped taking events holds the pump here (channel.ts): nothing more is read for it.
          await channel.room();
          if (channel.isClosed) break;
          const woke = await wake.wait(Math.min(timing.idleReadMs, timing.heartbeatMs));
          if (channel.isClosed) break;
          // Events committed in this process arrive pushed; an idle tick (another process's
          // changes) or a gap in what was pushed reads them from the log instead.
          const rows = (woke ? inbox.take(sent, (row) => row.revision) : undefined) ?? (await store.listTurnEvents(this.storage, turnId, sent));
          const lastSnapshot = rows.reduce((last, row, index) => (row.type === "turn.snapshot" ? index : last), -1);
          for (const [index, row] of rows.entries()) {
            sent = row.revision;
            if (row.type === "turn.snapshot") {
              if (index !== lastSnapshot) {
                live.advance(channel, sent);
                continue;
              }
              const current = await this.turn(turnId);
              if (!current) return;
              snapshot = current;
              send({ type: "turn.snapshot", revision: row.revision, turn: current }, row.revision);
            } else {
              send({ type: row.type, revision: row.revision, ...(row.data as object) }, row.revision);
            }
            live.advance(channel, sent);
            lastSentAt = Date.now();
            if (row.type === "turn.finished") finished = true;
          }
          if (rows.length === 0 && !woke) {
            // Deleting a Session deletes its Turns: the stream ends (a reconnect answers 404).
            if (!(await store.getTurnById(this.storage, turnId))) return;
            if (Date.now() - lastSentAt >= timing.heartbeatMs) {
              send({ type: "turn.heartbeat", revision: sent }, sent);
              lastSentAt = Date.now();
            }
          }
        }
      },
      (wake, channel) => [
        this.hub.onTurnEvents(sessionId, (rows) => {
          if (inbox.add(rows.filter((row) => row.turnId === turnId))) wake.set();
        }),
        // Deleting a Session deletes its Turns: the stream ends (a reconnect answers 404).
        this.hub.onDeleted(sessionId, () => channel.close()),
        this.hub.onDelta(sessionId, (delta) => {
          if (delta.turnId !== turnId) return;
          if (!live.push(channel, delta.revision, message(deltaEvent(delta), delta.revision) as SseMessage<TurnStreamEvent>, delta.delta.length)) wake.set();
        }),
      ],
      signal,
      timing.queue,
    );
  }

  // -------------------------------------------------------------------------
  // Session stream

  async watchSession(server: string, sessionId: string, afterActivityCursor: number, signal?: AbortSignal): Promise<AsyncIterable<SseMessage<SessionStreamEvent>>> {
    await this.requireSession(server, sessionId);
    const timing = this.timing;
    const inbox = new EventInbox();
    const live = new LiveOrder<SseMessage<SessionStreamEvent>>(afterActivityCursor);
    return pumpedStream<SseMessage<SessionStreamEvent>>(
      async (channel, wake) => {
        let cursor = afterActivityCursor;
        let lastSentAt = 0;
        let announced = -1;
        let woke = false;
        for (;;) {
          await channel.room();
          if (channel.isClosed) return;
          // Pushed events continue the cursor exactly; otherwise (the first page, an idle tick,
          // a gap, a change without events) read the log and the Session.
          const pushed = woke ? inbox.take(cursor, (row) => row.activityCursor) : undefined;
          const rows = pushed ?? (await store.listSessionEvents(this.storage, sessionId, cursor));
          for (const event of await this.sessionEvents(rows)) {
            channel.push(message(event, event.activityCursor) as SseMessage<SessionStreamEvent>, stringChars(event));
            live.advance(channel, event.activityCursor);
            lastSentAt = Date.now();
          }
          if (rows.length > 0) cursor = rows[rows.length - 1]!.activityCursor;
          live.advance(channel, cursor);
          if (rows.length === 500) continue; // a full page: keep paging before announcing
          let current = cursor;
          if (pushed === undefined) {
            const session = await getSession(this.storage, server, sessionId);
            if (!session) return; // deleted: the stream ends
            current = Math.max(cursor, session.activityCursor);
          }
          if (current !== announced || Date.now() - lastSentAt >= timing.heartbeatMs) {
            cursor = current;
            announced = current;
            channel.push(message({ type: "session.cursor", activityCursor: current }, current) as SseMessage<SessionStreamEvent>);
            live.advance(channel, current);
            lastSentAt = Date.now();
          }
          woke = await wake.wait(Math.min(timing.idleReadMs, timing.heartbeatMs));
        }
      },
      (wake, channel) => [
        this.hub.onTurnEvents(sessionId, (rows) => {
          if (inbox.add(rows)) wake.set();
        }),
        // A deleted Session's stream ends.
        this.hub.onDeleted(sessionId, () => channel.close()),
        this.hub.onDelta(sessionId, (delta) => {
          const event = { ...deltaEvent(delta), type: `session.${deltaEvent(delta).type}`, activityCursor: delta.activityCursor, sessionId, turnId: delta.turnId };
          if (!live.push(channel, delta.activityCursor, message(event, delta.activityCursor) as SseMessage<SessionStreamEvent>, delta.delta.length)) wake.set();
        }),
      ],
      signal,
      timing.queue,
    );
  }

  /** Wraps durable rows as Session-stream events; a Turn's snapshot rows render its current state once (at its last row). */
  private async sessionEvents(rows: readonly TurnEventRow[]): Promise<(AnyEvent & { activityCursor: number })[]> {
    const lastSnapshotIndex = new Map<string, number>();
    rows.forEach((row, index) => {
      if (row.type === "turn.snapshot") lastSnapshotIndex.set(row.turnId, index);
    });
    const out: (AnyEvent & { activityCursor: number })[] = [];
    for (const [index, row] of rows.entries()) {
      const envelope = { activityCursor: row.activityCursor, sessionId: row.sessionId, turnId: row.turnId, revision: row.revision };
      if (row.type === "turn.snapshot") {
        if (lastSnapshotIndex.get(row.turnId) !== index) continue;
        const turn = await this.turn(row.turnId);
        if (!turn) continue;
        out.push({ type: "session.turn.snapshot", ...envelope, revision: turn.revision, turn });
      } else {
        out.push({ type: `session.${row.type}`, ...envelope, ...(row.data as object) });
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------
  // Server stream

  async watchServer(server: string, afterServerCursor: number | undefined, signal?: AbortSignal): Promise<AsyncIterable<SseMessage<ServerStreamEvent>>> {
    const timing = this.timing;
    const start = afterServerCursor ?? (await readServerCursor(this.storage));
    return pumpedStream<SseMessage<ServerStreamEvent>>(
      async (channel, wake) => {
        const send = (event: AnyEvent & { serverCursor: number }): void => {
          channel.push(message(event, event.serverCursor) as SseMessage<ServerStreamEvent>, stringChars(event));
        };
        const announced = new Set<string>();
        let cursor = start;
        let lastSentAt = Date.now();
        if (afterServerCursor === undefined) send({ type: "server.cursor", serverCursor: cursor });
        for (;;) {
          await channel.room();
          if (channel.isClosed) return;
          const events = await this.serverEvents(server, cursor, announced);
          for (const event of events) send(event);
          if (events.length > 0) lastSentAt = Date.now();
          const current = await readServerCursor(this.storage);
          const observed = events.length > 0 ? events[events.length - 1]!.serverCursor : cursor;
          if (current > observed && events.length < 500) {
            // Rows of other servers (or purged ones) advanced the cursor without an event.
            cursor = current;
            send({ type: "server.activity", serverCursor: current });
            lastSentAt = Date.now();
          } else {
            cursor = observed;
          }
          if (events.length === 500) continue;
          if (Date.now() - lastSentAt >= timing.heartbeatMs) {
            send({ type: "server.cursor", serverCursor: cursor });
            lastSentAt = Date.now();
          }
          await wake.wait(Math.min(timing.idleReadMs, timing.heartbeatMs));
        }
      },
      (wake) => [this.hub.onServer(server, () => wake.set())],
      signal,
      timing.queue,
    );
  }

  /** Every stamped row of `server` after `after`, as server-stream events in cursor order (at most 500). */
  private async serverEvents(server: string, after: number, announced: Set<string>): Promise<(AnyEvent & { serverCursor: number })[]> {
    type Item = { cursor: number; build: () => Promise<(AnyEvent & { serverCursor: number })[]> };
    const items: Item[] = [];
    for (const row of await listSessionsStampedAfter(this.storage, server, after)) {
      items.push({
        cursor: row.serverCursor,
        build: async () => {
          const session = toSession(row);
          if (!announced.has(row.id)) {
            announced.add(row.id);
            return [{ type: "session.created", serverCursor: row.serverCursor, session }];
          }
          if (session.title !== undefined) return [{ type: "session.title", serverCursor: row.serverCursor, sessionId: row.id, title: session.title, updatedAt: session.updatedAt }];
          return [{ type: "server.activity", serverCursor: row.serverCursor }];
        },
      });
    }
    for (const row of await listDeletedSessions(this.storage, server, after)) {
      items.push({
        cursor: row.serverCursor,
        build: async () => {
          announced.delete(row.sessionId);
          return [{ type: "session.deleted", serverCursor: row.serverCursor, sessionId: row.sessionId, deletedAt: row.deletedAt }];
        },
      });
    }
    const turnRows = await store.listServerTurnEvents(this.storage, server, after);
    const lastSnapshot = new Map<string, number>();
    turnRows.forEach((row) => {
      if (row.type === "turn.snapshot") lastSnapshot.set(row.turnId, row.serverCursor);
    });
    for (const row of turnRows) {
      if (DELTA_TYPES.has(row.type)) continue;
      if (row.type === "turn.snapshot" && lastSnapshot.get(row.turnId) !== row.serverCursor) continue;
      items.push({
        cursor: row.serverCursor,
        build: async () => {
          const out: (AnyEvent & { serverCursor: number })[] = [];
          if (!announced.has(row.sessionId)) {
            const session = await getSession(this.storage, server, row.sessionId);
            if (!session) return [];
            announced.add(row.sessionId);
            out.push({ type: "session.created", serverCursor: row.serverCursor - 1, session: toSession(session) as Session });
          }
          const envelope = { serverCursor: row.serverCursor, activityCursor: row.activityCursor, sessionId: row.sessionId, turnId: row.turnId, revision: row.revision };
          if (row.type === "turn.snapshot") {
            const turn = await this.turn(row.turnId);
            if (turn) out.push({ type: "session.turn.snapshot", ...envelope, revision: turn.revision, turn });
          } else {
            out.push({ type: `session.${row.type}`, ...envelope, ...(row.data as object) });
          }
          return out;
        },
      });
    }
    items.sort((a, b) => a.cursor - b.cursor);
    const out: (AnyEvent & { serverCursor: number })[] = [];
    for (const item of items.slice(0, 500)) out.push(...(await item.build()));
    return out;
  }
}

function deltaEvent(delta: LiveDelta): AnyEvent & { revision: number } {
  return {
    type: `turn.${delta.kind}.delta`,
    revision: delta.revision,
    partId: delta.partId,
    assistantMessageIndex: delta.assistantMessageIndex,
    offset: delta.offset,
    delta: delta.delta,
  };
}

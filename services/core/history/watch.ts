// The history watch (`watchHistory`): the Session's queue and pending interactions (sent at the
// start and whenever they change), then every published row after the resume position, then
// live. Each message's SSE `id` is the position `<sourceSequence>.<itemIndex>` of the last row
// sent, so Last-Event-ID (or the last `nextAfter`) resumes exactly. A caught-up stream sends
// `history.cursor` when it catches up and at least every heartbeat while idle. Changes in this
// process wake it through the activity hub; an idle re-read finds other processes' changes.
import type { HistoryQueueEntry, HistoryStreamEvent, Interaction } from "../../../generated/client/types.gen.js";
import type { SseMessage } from "../../../generated/server/routes.js";
import { notFound, validationFailure } from "../../contract/failure.js";
import { getSession, historyRows, turns as store, type StorageHandle } from "../../storage/index.js";
import { pumpedStream, type Channel, type Wake } from "../events/channel.js";
import type { ActivityHub } from "../events/hub.js";
import { DEFAULT_STREAM_TIMING, type StreamTiming } from "../events/streams.js";
import type { Interactions } from "./interactions.js";
import { parseCount } from "./query.js";
import { positionOf, toHistoryRow } from "./rows.js";

/** Rows one `history.rows` message carries at most. */
const ROWS_PER_MESSAGE = 100;

/** The resume position: Last-Event-ID `<sourceSequence>.<itemIndex>` wins over the query. */
export function resumePosition(lastEventId: string | undefined, query: { afterSourceSequence?: string; afterItemIndex?: string } | undefined): [number, number] {
  if (lastEventId !== undefined && lastEventId !== "") {
    const match = /^(\d+)\.(\d+)$/.exec(lastEventId);
    if (!match || !Number.isSafeInteger(Number(match[1])) || !Number.isSafeInteger(Number(match[2]))) {
      throw validationFailure("Invalid request: header.last-event-id: must be <sourceSequence>.<itemIndex>");
    }
    return [Number(match[1]), Number(match[2])];
  }
  const sequence = parseCount(query?.afterSourceSequence, "afterSourceSequence", 0);
  const index = parseCount(query?.afterItemIndex, "afterItemIndex", 0);
  if (sequence === undefined && index !== undefined) throw validationFailure("Invalid request: query.afterItemIndex: requires query.afterSourceSequence");
  return [sequence ?? 0, index ?? (sequence === undefined || sequence === 0 ? 0 : Number.MAX_SAFE_INTEGER)];
}

export class HistoryWatch {
  constructor(
    private readonly storage: StorageHandle,
    private readonly hub: ActivityHub,
    private readonly interactions: Interactions,
    private readonly timing: StreamTiming = DEFAULT_STREAM_TIMING,
  ) {}

  private async queue(sessionId: string): Promise<HistoryQueueEntry[]> {
    const rows = await store.turnsInPhases(this.storage, sessionId, ["pending", "running"]);
    return rows
      .map((turn) => ({ turnId: turn.id, sequence: turn.sequence, phase: turn.phase as "pending" | "running", acceptedAt: turn.acceptedAt }))
      .sort((a, b) => a.sequence - b.sequence);
  }

  async watch(server: string, sessionId: string, after: [number, number], signal?: AbortSignal): Promise<AsyncIterable<SseMessage<HistoryStreamEvent>>> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
    const latest = await historyRows.latestSequence(this.storage.reader().sql, sessionId);
    if (after[0] > latest) throw validationFailure(`Invalid request: query.afterSourceSequence: ${after[0]} is past the Session's latest history event (${latest})`);
    const timing = this.timing;
    let position = after;
    const id = (): string => `${position[0]}.${position[1]}`;
    const pump = async (channel: Channel<SseMessage<HistoryStreamEvent>>, wake: Wake): Promise<void> => {
      const send = (event: HistoryStreamEvent): void => channel.push({ event: event.type, id: id(), data: event });
      let queue: string | undefined;
      let pending: string | undefined;
      let caughtUp = false;
      let lastSentAt = 0;
      while (!channel.isClosed) {
        await channel.room();
        if (channel.isClosed) return;
        const currentQueue = await this.queue(sessionId);
        if (JSON.stringify(currentQueue) !== queue) {
          queue = JSON.stringify(currentQueue);
          send({ type: "history.queue", queue: currentQueue });
          lastSentAt = Date.now();
        }
        const interactions: Interaction[] = await this.interactions.pendingOf(sessionId);
        if (JSON.stringify(interactions) !== pending) {
          pending = JSON.stringify(interactions);
          send({ type: "history.interactions", interactions });
          lastSentAt = Date.now();
        }
        const sql = this.storage.reader().sql;
        const through = await historyRows.latestSequence(sql, sessionId);
        for (;;) {
          // A reader that stopped taking messages holds the pump here (events/channel.ts).
          await channel.room();
          if (channel.isClosed) return;
          const rows = await historyRows.listRows(sql, sessionId, { after: position, through, limit: ROWS_PER_MESSAGE });
          if (rows.length === 0) break;
          position = [rows.at(-1)!.sourceSequence, rows.at(-1)!.itemIndex];
          send({ type: "history.rows", rows: rows.map(toHistoryRow), nextAfter: positionOf(rows.at(-1)!), through });
          lastSentAt = Date.now();
          caughtUp = false;
          if (rows.length < ROWS_PER_MESSAGE) break;
        }
        if (!caughtUp || Date.now() - lastSentAt >= timing.heartbeatMs) {
          send({ type: "history.cursor", through });
          caughtUp = true;
          lastSentAt = Date.now();
        }
        await wake.wait(Math.min(timing.idleReadMs, timing.heartbeatMs));
      }
    };
    return pumpedStream(pump, (wake, channel) => [this.hub.onSession(sessionId, () => wake.set()), this.hub.onDeleted(sessionId, () => channel.close())], signal, timing.queue);
  }
}

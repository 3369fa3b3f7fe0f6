// What a watch stream's pump keeps beside its channel (streams.ts): the durable rows this
// process's commits pushed while the pump was busy or waiting (EventInbox, bounded: past it the
// pump reads the log), and the live deltas held back until the durable event they build on has
// gone out (LiveOrder, counted against the channel's limit).
import type { TurnEventRow } from "../../storage/index.js";
import { stringChars } from "../../contract/string-chars.js";
import type { Channel } from "./channel.js";

/**
 * Live deltas in order behind the durable events they build on. A delta is pushed as it comes,
 * but the durable event it follows (its revision or activity cursor) may not have gone out yet:
 * the pump waits in room() while the reader is behind, and that event waits in the inbox. Pushed
 * then, the delta would reach the reader first, and a reader cut (or gone) after it would resume
 * past that event: a Session stream never sends it again. Such a delta waits here until the pump
 * has pushed that event; held deltas count against the channel's limit (past it the stream is cut).
 */
export class LiveOrder<T> {
  private readonly held: { readonly key: number; readonly item: T; readonly weight: number }[] = [];
  /** The held deltas' characters (they count against the channel's byte limit). */
  private heldWeight = 0;

  constructor(
    /** The key of the last durable event (or cursor) the pump pushed. */
    private through: number,
  ) {}

  /**
   * Pushes a delta (of `weight` characters) that follows durable event `key`, or holds it (false)
   * until the pump has pushed that event.
   */
  push(channel: Channel<T>, key: number, item: T, weight = 0): boolean {
    if (this.held.length === 0 && key <= this.through) {
      channel.pushLive(item, weight);
      return true;
    }
    if (channel.isClosed) return true;
    if (!channel.reserve(this.held.length, weight, this.heldWeight)) {
      this.held.length = 0;
      this.heldWeight = 0;
      return true;
    }
    this.held.push({ key, item, weight });
    this.heldWeight += weight;
    return false;
  }

  /** The pump pushed the durable events through `key`: the deltas that follow them go out. */
  advance(channel: Channel<T>, key: number): void {
    if (key > this.through) this.through = key;
    while (this.held.length > 0 && this.held[0]!.key <= this.through) {
      const { item, weight } = this.held.shift()!;
      this.heldWeight -= weight;
      channel.push(item, weight);
    }
  }
}

/** The most pushed rows a stream's inbox keeps for its pump; past it the pump reads the log. */
const INBOX_LIMIT = 2048;
/** The most characters of row data (`stringChars`) an inbox keeps: a tool's output can be large. */
const INBOX_CHARS = 16 * 1024 * 1024;

/**
 * Durable events pushed by this process's commits, waiting for a stream's pump. `take` hands
 * over the run that continues the stream's cursor exactly, or undefined when there is a gap
 * (the pump then reads the log).
 */
export class EventInbox {
  private rows: TurnEventRow[] = [];
  private chars = 0;
  /** More than INBOX_LIMIT rows (or INBOX_CHARS of data) came while the pump waited (a reader that stopped): they were dropped, and the log has them. */
  private overflowed = false;

  /** True when something was added. */
  add(rows: readonly TurnEventRow[]): boolean {
    if (rows.length === 0) return false;
    if (!this.overflowed) for (const row of rows) this.chars += stringChars(row.data);
    if (this.overflowed || this.rows.length + rows.length > INBOX_LIMIT || this.chars > INBOX_CHARS) {
      this.rows = [];
      this.chars = 0;
      this.overflowed = true;
      return true;
    }
    this.rows.push(...rows);
    return true;
  }

  take(after: number, key: (row: TurnEventRow) => number): TurnEventRow[] | undefined {
    const rows = this.rows.filter((row) => key(row) > after).sort((a, b) => key(a) - key(b));
    this.rows = [];
    this.chars = 0;
    if (this.overflowed) {
      this.overflowed = false;
      return undefined;
    }
    if (rows.length === 0) return undefined;
    for (const [index, row] of rows.entries()) if (key(row) !== after + index + 1) return undefined;
    return rows;
  }
}

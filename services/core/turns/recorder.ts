// The durable record of one running Turn: its ordered parts and the queue of commits that write
// them. Every change (dirty parts + a row patch + events) is committed in order behind the earlier
// ones, guarded by this process's claim; streamed text, reasoning and refusals are appended to
// their open part, announced at once as live deltas and committed at most every `flushMs`.
import { randomUUID } from "node:crypto";
import type { TurnPart } from "../../../generated/client/types.gen.js";
import { diagnostics as contextStore, turns as store, type NewTurnEvent, type StorageHandle, type StorageTransaction, type TurnPatch } from "../../storage/index.js";
import type { StagedRequest } from "../diagnostics/record.js";

type Within = (tx: StorageTransaction) => Promise<void>;

/** What one change takes: dirty parts, events, row fields, riders, and the prepared request its UPDATE records. */
export interface Swept {
  readonly parts: { ordinal: number; data: TurnPart }[];
  readonly events: NewTurnEvent[];
  readonly patch: TurnPatch;
  readonly within?: Within;
  readonly request?: StagedRequest;
}
import type { ActivityHub } from "../events/hub.js";
import { observeDelta, observeEvents } from "./observe.js";
import { untilWritten } from "./storage-wait.js";

export type ContentKind = "text" | "reasoning" | "refusal";

export interface RecorderOptions {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly server: string;
  readonly sessionId: string;
  readonly turnId: string;
  /** The claim every commit is guarded by. */
  readonly owner: string;
  readonly flushMs: number;
  readonly now: () => number;
  readonly revision: number;
  readonly activityCursor: number;
  readonly parts: readonly TurnPart[];
  /** The claim was lost (a guard failed): stop without writing more. */
  readonly onLost: () => void;
  /** A commit saw a cancellation recorded by another caller. */
  readonly onCancellation: (reason: string | undefined) => void;
  /** True once the Turn is lost: queued commits are dropped. */
  readonly isLost: () => boolean;
  /** A write that fails on a full disk is retried until one of these aborts (the Turn stops, the host stops). */
  readonly waitUntil: readonly (AbortSignal | undefined)[];
}

/** A commit not yet started: what it will add to the sweep, and when it is written. */
interface QueuedChange {
  readonly events: NewTurnEvent[];
  patch: TurnPatch;
  done: Promise<void>;
}

const isContent = (part: TurnPart | undefined): boolean => part?.type === "text" || part?.type === "reasoning" || part?.type === "refusal";

export class TurnRecorder {
  private readonly parts: TurnPart[];
  private readonly dirty = new Set<number>();
  /** Events and row fields that ride the next commit (e.g. usage reported at the end of a stream). */
  private staged: { events: NewTurnEvent[]; patch: TurnPatch } = { events: [], patch: {} };
  /** Writes that ride the next commit's transaction (`stageWrite`). */
  private riders: Within[] = [];
  /** Prepared requests that ride the next commit (`stageRequest`). */
  private requests: StagedRequest[] = [];
  private writes: Promise<void> = Promise.resolve();
  /** The commit waiting behind the running one: later commits join it until it starts. */
  private queued: QueuedChange | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private open: { kind: ContentKind; ordinal: number } | undefined;
  private revisionValue: number;
  private activityCursorValue: number;

  constructor(private readonly options: RecorderOptions) {
    this.parts = [...options.parts];
    this.revisionValue = options.revision;
    this.activityCursorValue = options.activityCursor;
  }

  get revision(): number {
    return this.revisionValue;
  }

  /** Every part, in order (read-only view). */
  get all(): readonly TurnPart[] {
    return this.parts;
  }

  part(ordinal: number): TurnPart {
    return this.parts[ordinal]!;
  }

  add(part: TurnPart): number {
    this.parts.push(part);
    const ordinal = this.parts.length - 1;
    this.dirty.add(ordinal);
    return ordinal;
  }

  set(ordinal: number, part: TurnPart): void {
    this.parts[ordinal] = part;
    this.dirty.add(ordinal);
  }

  /** Re-reads a part others may have changed (approval and question replies). */
  async refresh(ordinal: number): Promise<TurnPart> {
    const row = await store.getPart(this.options.storage, this.options.turnId, ordinal);
    if (row) this.parts[ordinal] = row.data as TurnPart;
    return this.parts[ordinal]!;
  }

  /** Adds a write (a record of the Turn's work) to the next commit's transaction. */
  stageWrite(write: Within): void {
    this.riders.push(write);
  }

  /** Adds a prepared request's record to the next commit (its UPDATE records it: no statement of its own). */
  stageRequest(request: StagedRequest): void {
    this.requests.push(request);
  }

  /** Adds events and row fields to the next commit instead of committing them on their own. */
  stage(events: readonly NewTurnEvent[], patch: TurnPatch): void {
    observeEvents(this.options.turnId, events);
    this.staged = { events: [...this.staged.events, ...events], patch: { ...this.staged.patch, ...patch } };
  }

  /**
   * Takes what the next change writes: the dirty parts, the staged events and fields, then
   * `events`. Streamed content swept into another change is announced by a snapshot, as a flush
   * would: observers without live deltas (the server stream) see it only that way.
   */
  sweep(events: readonly NewTurnEvent[] = [], patch: TurnPatch = {}): Swept {
    return this.take(events, patch);
  }

  private take(events: readonly NewTurnEvent[] = [], patch: TurnPatch = {}): Swept {
    const parts = [...this.dirty].sort((a, b) => a - b).map((ordinal) => ({ ordinal, data: this.parts[ordinal]! }));
    this.dirty.clear();
    const all = [...this.staged.events, ...events];
    const merged = { ...this.staged.patch, ...patch };
    this.staged = { events: [], patch: {} };
    if (parts.some(({ data }) => isContent(data)) && !all.some((event) => event.type === "turn.snapshot")) all.unshift({ type: "turn.snapshot", data: null });
    const requests = this.requests.splice(0);
    for (const request of requests) request.taken = true;
    // One prepared request rides the change's UPDATE; more (rare: no change between two model
    // requests) are inserted in order ahead of the riders (a usage update among them follows its insert).
    const [request] = requests.length === 1 ? requests : [];
    const inserts = requests.length > 1 ? requests.map((staged): Within => async (tx) => void (await contextStore.insertContext(tx, staged.record))) : [];
    const riders = [...inserts, ...this.riders.splice(0)];
    const taken = { parts, events: all, patch: merged, ...(request ? { request } : {}) };
    if (riders.length === 0) return taken;
    return {
      ...taken,
      within: async (tx) => {
        for (const rider of riders) await rider(tx);
      },
    };
  }

  /** Puts back what a change that did not apply had swept (its guard refused it). */
  unsweep(swept: { parts: readonly { ordinal: number }[]; events: readonly NewTurnEvent[]; patch: TurnPatch; within?: Within | undefined; request?: StagedRequest | undefined }): void {
    if (swept.within) this.riders.unshift(swept.within);
    if (swept.request) this.requests.unshift(swept.request);
    for (const { ordinal } of swept.parts) this.dirty.add(ordinal);
    this.staged = { events: swept.events.filter((event) => event.type !== "turn.snapshot"), patch: swept.patch };
  }

  /**
   * Queues one durable change (dirty parts + staged + patch + events) behind earlier ones. Commits
   * asked for while an earlier one is still queued join it: one change, one transaction, every
   * caller settled by its commit (a CodeMode script's thousands of concurrent calls cost a few
   * transactions, not two each). A change that fails to write puts back what it took, so the next
   * one (the settlement at the latest) carries it: nothing recorded in memory is dropped.
   */
  commit(events: NewTurnEvent[], patch?: TurnPatch): Promise<void> {
    observeEvents(this.options.turnId, events);
    const queued = this.queued;
    if (queued) {
      queued.events.push(...events);
      if (patch) queued.patch = { ...queued.patch, ...patch };
      return queued.done;
    }
    const change: QueuedChange = { events: [...events], patch: { ...patch }, done: Promise.resolve() };
    this.queued = change;
    change.done = this.writes.then(async () => {
      // One turn of the event loop first: the calls whose messages are already waiting (a script's
      // batch of tool calls) join this change instead of each committing alone.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.queued === change) this.queued = undefined;
      if (this.options.isLost()) return;
      const swept = this.take(change.events, change.patch);
      let result: Awaited<ReturnType<typeof store.changeTurn>>;
      try {
        // A full disk (or a busy database) holds the Turn here until the write goes through.
        result = await untilWritten(
          () =>
            store.changeTurn(this.options.storage, this.options.turnId, {
              patch: swept.patch,
              parts: swept.parts,
              events: swept.events,
              expectOwner: this.options.owner,
              expectPhases: ["running"],
              ...(swept.within ? { within: swept.within } : {}),
              ...(swept.request ? { preparedRequest: swept.request.record } : {}),
              // Progress is re-derivable: it survives a process crash; a power loss at worst settles
              // the Turn as process_lost. Claims and settlements stay fully synced.
              durability: "relaxed",
            }),
          this.options.waitUntil,
        );
      } catch (error) {
        this.putBack(swept);
        throw error;
      }
      if (!result) {
        this.options.onLost();
        return;
      }
      this.revisionValue = result.turn.revision;
      this.activityCursorValue = result.turn.activityCursor;
      if (result.turn.cancellation !== null) this.options.onCancellation((result.turn.cancellation as { reason?: string }).reason);
      this.options.hub.changed(this.options.server, this.options.sessionId);
    });
    this.writes = change.done.catch(() => {});
    return change.done;
  }

  /** What a change that failed to write had swept, back in front of what was staged since. */
  private putBack(swept: Swept): void {
    if (swept.within) this.riders.unshift(swept.within);
    if (swept.request) this.requests.unshift(swept.request);
    for (const { ordinal } of swept.parts) this.dirty.add(ordinal);
    this.staged = { events: [...swept.events.filter((event) => event.type !== "turn.snapshot"), ...this.staged.events], patch: { ...swept.patch, ...this.staged.patch } };
  }

  /** Every queued commit has run. */
  settled(): Promise<void> {
    return this.writes;
  }

  private flushSoon(): void {
    if (this.options.flushMs <= 0) {
      void this.commit([{ type: "turn.snapshot", data: null }]).catch(() => {});
      return;
    }
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      if (this.dirty.size > 0) void this.commit([{ type: "turn.snapshot", data: null }]).catch(() => {});
    }, this.options.flushMs);
  }

  /** Commits streamed content now (or waits for the queued commits when nothing is dirty). */
  async flush(): Promise<void> {
    this.cancelFlush();
    if (this.dirty.size > 0 || this.staged.events.length > 0) await this.commit([{ type: "turn.snapshot", data: null }]);
    else await this.writes;
  }

  /** Stops the flush timer and waits for the queued commits (before a settlement writes the rest itself). */
  async quiesce(): Promise<void> {
    this.cancelFlush();
    await this.writes;
  }

  /** The stamps the recorder last committed (the delta events' base). */
  get activityCursor(): number {
    return this.activityCursorValue;
  }

  cancelFlush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  /** Ends the open content part (a reasoning part records when it ended). */
  closeContent(): void {
    const open = this.open;
    if (!open) return;
    const part = this.parts[open.ordinal]!;
    if (part.type === "reasoning" && part.completedAt === undefined) this.set(open.ordinal, { ...part, completedAt: this.options.now() });
    this.open = undefined;
  }

  /** Whether the open content part is of `kind`. */
  isOpen(kind: ContentKind): boolean {
    return this.open?.kind === kind;
  }

  /** Appends streamed content to the open part of its kind (opening one when needed) and sends the live delta. */
  appendContent(kind: ContentKind, text: string, assistantMessageIndex: number): void {
    if (text === "") return;
    if (this.open?.kind !== kind) {
      this.closeContent();
      const base = { id: randomUUID(), assistantMessageIndex, text: "" };
      const part: TurnPart = kind === "reasoning" ? { type: "reasoning", ...base, startedAt: this.options.now() } : { type: kind, ...base };
      this.open = { kind, ordinal: this.add(part) };
    }
    const ordinal = this.open.ordinal;
    const part = this.parts[ordinal] as Extract<TurnPart, { text: string }>;
    const offset = part.text.length;
    this.set(ordinal, { ...part, text: part.text + text } as TurnPart);
    observeDelta(this.options.turnId, kind, part.id, offset, text);
    this.options.hub.delta({
      sessionId: this.options.sessionId,
      turnId: this.options.turnId,
      kind,
      partId: part.id,
      assistantMessageIndex: part.assistantMessageIndex,
      offset,
      delta: text,
      revision: this.revisionValue,
      activityCursor: this.activityCursorValue,
    });
    this.flushSoon();
  }
}

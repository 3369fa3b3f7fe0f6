// One Session as the TUI shows it: the Session, its Turns in sequence order, and the stream's
// health. History comes from listSessionTurns; the Session stream (watchSession) announces
// Turns, and every unfinished Turn is followed with watchTurn, which keeps it reconciled
// (deltas by offset, durable events, snapshots). Reconnect rules: a brief disconnect resumes
// silently; an outage longer than OUTAGE_NOTICE_MS shows `Reconnecting` with its error and
// refreshes active Turns once a second until a stream catches up; a Session stream that cannot
// resume is restarted with backoff and reloads the history.
import { sdk, unwrap, watchSession, watchTurn, type Session, type SessionStreamEvent, type Turn, type ZeClient } from "../../../clients/index.js";

export const OUTAGE_NOTICE_MS = 1_500;

export interface FeedView {
  readonly session: Session | undefined;
  readonly turns: readonly Turn[];
  /** Set while a stream outage has lasted longer than OUTAGE_NOTICE_MS. */
  readonly reconnecting: string | undefined;
  /** Bumped on every change (for useSyncExternalStore). */
  readonly version: number;
}

const finished = (turn: Turn): boolean => turn.outcome !== undefined;

export interface FeedOptions {
  /** The watches' retry delays (tests shorten them). */
  readonly retryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
}

export class SessionFeed {
  private view: FeedView = { session: undefined, turns: [], reconnecting: undefined, version: 0 };
  private readonly listeners = new Set<() => void>();
  private readonly watched = new Set<string>();
  private readonly abort = new AbortController();
  private outageSince: number | undefined;
  private outageError = "";
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly client: ZeClient,
    private readonly server: string,
    readonly sessionId: string,
    private readonly options: FeedOptions = {},
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): FeedView => this.view;

  private emit(patch: Partial<FeedView>): void {
    this.view = { ...this.view, ...patch, version: this.view.version + 1 };
    for (const listener of [...this.listeners]) listener();
  }

  private get path() {
    return { server: this.server, sessionId: this.sessionId };
  }

  /** Loads the Session and its history, then follows it until close(). */
  async open(): Promise<void> {
    const cursor = await this.reload();
    this.timer = setInterval(() => void this.tick(), 1_000);
    this.timer.unref?.();
    void this.followSession(cursor);
  }

  /** Reads the Session and every Turn; resolves with the activity cursor the history is stable through. */
  private async reload(): Promise<number> {
    const { session } = await unwrap(sdk.getSession({ client: this.client.client, path: this.path }));
    const turns: Turn[] = [];
    let after: number | undefined;
    let cursor = 0;
    for (;;) {
      const page = await unwrap(
        sdk.listSessionTurns({ client: this.client.client, path: this.path, query: { limit: "100", ...(after !== undefined ? { afterSequence: String(after) } : {}) } }),
      );
      cursor = Math.max(cursor, page.boundary.activityCursor);
      turns.push(...page.turns.map((state) => state.turn));
      if (page.nextAfterSequence === undefined) break;
      after = page.nextAfterSequence;
    }
    this.emit({ session, turns: mergeTurns(this.view.turns, turns) });
    for (const turn of turns) if (!finished(turn)) this.follow(turn.id);
    return cursor;
  }

  private async followSession(cursor: number): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        await watchSession(this.client, {
          ...this.path,
          afterActivityCursor: cursor,
          signal: this.abort.signal,
          ...(this.options.retryDelayMs !== undefined ? { retryDelayMs: this.options.retryDelayMs } : {}),
          ...(this.options.maxRetryDelayMs !== undefined ? { maxRetryDelayMs: this.options.maxRetryDelayMs } : {}),
          onEvent: (event) => {
            failures = 0;
            this.recovered();
            this.onSessionEvent(event);
          },
          onLifecycle: (event) => {
            if (event.type === "session.reconnecting") this.outage(event.error.message);
            else this.recovered();
          },
        });
        return;
      } catch (error) {
        if (this.closed) return;
        // The stream cannot resume: restart it with backoff and reload the history.
        this.outage(error instanceof Error ? error.message : String(error));
        failures += 1;
        await delay(Math.min((this.options.retryDelayMs ?? 500) * 2 ** (failures - 1), this.options.maxRetryDelayMs ?? 10_000), this.abort.signal);
        try {
          cursor = await this.reload();
        } catch (reloadError) {
          this.outage(reloadError instanceof Error ? reloadError.message : String(reloadError));
        }
      }
    }
  }

  private onSessionEvent(event: SessionStreamEvent): void {
    if (event.type === "session.cursor") return;
    if (event.type === "session.turn.snapshot") this.upsert(event.turn);
    if (!this.watched.has(event.turnId) && !this.view.turns.some((turn) => turn.id === event.turnId && finished(turn))) this.follow(event.turnId);
  }

  /** Follows one Turn to its end (called for Turns this client submits, too). */
  follow(turnId: string): void {
    if (this.watched.has(turnId) || this.closed) return;
    this.watched.add(turnId);
    void watchTurn(this.client, {
      ...this.path,
      turnId,
      signal: this.abort.signal,
      ...(this.options.retryDelayMs !== undefined ? { retryDelayMs: this.options.retryDelayMs } : {}),
      ...(this.options.maxRetryDelayMs !== undefined ? { maxRetryDelayMs: this.options.maxRetryDelayMs } : {}),
      onEvent: (_event, turn) => {
        this.recovered();
        this.upsert(turn);
      },
      onReconnecting: (info) => this.outage(info.error.message),
    })
      .then((turn) => this.upsert(turn))
      .catch(async () => {
        if (this.closed) return;
        // The watch gave up: read the Turn once; the Session stream re-announces it if it moves on.
        try {
          const { turn } = await unwrap(sdk.getTurn({ client: this.client.client, path: { ...this.path, turnId } }));
          this.upsert(turn);
        } catch {
          // the next tick or reload shows it
        }
      })
      .finally(() => this.watched.delete(turnId));
  }

  /** Puts a (copy of a) Turn in sequence order, keeping a held Turn that is newer. */
  upsert(turn: Turn): void {
    const copy: Turn = { ...turn, parts: [...turn.parts] };
    const turns = [...this.view.turns];
    const index = turns.findIndex((candidate) => candidate.id === turn.id);
    if (index >= 0) {
      const held = turns[index]!;
      if (held.revision > copy.revision || (finished(held) && !finished(copy))) return;
      turns[index] = copy;
    } else {
      turns.push(copy);
      turns.sort((a, b) => a.sequence - b.sequence);
    }
    const contextUse = copy.contextUse ?? this.view.session?.contextUse;
    const session = this.view.session && contextUse ? { ...this.view.session, contextUse } : this.view.session;
    this.emit({ turns, session });
  }

  private outage(message: string): void {
    this.outageSince ??= Date.now();
    this.outageError = message;
  }

  private recovered(): void {
    if (this.outageSince === undefined) return;
    this.outageSince = undefined;
    if (this.view.reconnecting !== undefined) this.emit({ reconnecting: undefined });
  }

  /** Once a second: name a long outage, and meanwhile refresh the active Turns. */
  private async tick(): Promise<void> {
    if (this.outageSince === undefined || Date.now() - this.outageSince < OUTAGE_NOTICE_MS) return;
    if (this.view.reconnecting !== this.outageError) this.emit({ reconnecting: this.outageError });
    for (const turn of this.view.turns.filter((candidate) => !finished(candidate))) {
      try {
        const { turn: fresh } = await unwrap(sdk.getTurn({ client: this.client.client, path: { ...this.path, turnId: turn.id } }));
        this.upsert(fresh);
      } catch {
        // still out
      }
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.abort.abort();
  }
}

function mergeTurns(held: readonly Turn[], loaded: readonly Turn[]): Turn[] {
  const byId = new Map(held.map((turn) => [turn.id, turn]));
  for (const turn of loaded) {
    const old = byId.get(turn.id);
    if (!old || old.revision <= turn.revision) byId.set(turn.id, turn);
  }
  return [...byId.values()].sort((a, b) => a.sequence - b.sequence);
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

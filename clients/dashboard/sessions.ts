// The Sessions grid: one card per Session with its latest Turn's live status, kept current by
// `watchServer` events (upserted by Session id: a resumed stream may repeat session.created).
// A card is a link to the Session's route (`#/sessions/<id>`), so it opens in a new tab too.
import type { Session, Turn, TurnPhase } from "../../generated/client/types.gen.js";
import type { ServerWatchEvent } from "../watch.js";
import { h, replaceChildren, time } from "./dom.js";
import { sessionHref } from "./router.js";

/** What the grid knows about a Session's latest Turn. */
export interface TurnStatus {
  readonly turnId: string;
  sequence: number | undefined;
  revision: number;
  phase: TurnPhase;
  outcome: string | undefined;
  readonly approvals: Set<string>;
  readonly questions: Set<string>;
}

export interface SessionEntry {
  session: Session;
  turn: TurnStatus | undefined;
  /** Last activity seen (ms), for ordering. */
  touchedAt: number;
}

const TERMINAL: ReadonlySet<TurnPhase> = new Set(["completed", "cancelled", "failed"]);
export const isTerminal = (phase: TurnPhase): boolean => TERMINAL.has(phase);

export function statusOfTurn(turn: Turn): TurnStatus {
  const approvals = new Set<string>();
  const questions = new Set<string>();
  for (const part of turn.parts) {
    if (part.type !== "tool") continue;
    if (part.approval.state === "pending") approvals.add(part.approval.request.id);
    if (part.question?.state === "pending") questions.add(part.question.request.id);
  }
  return { turnId: turn.id, sequence: turn.sequence, revision: turn.revision, phase: turn.phase, outcome: turn.outcome?.kind, approvals, questions };
}

/** The one word a card shows: what the Session is doing or how its latest Turn ended. */
export function statusWord(status: TurnStatus | undefined): string {
  if (!status) return "idle";
  if (status.approvals.size > 0) return "approval";
  if (status.questions.size > 0) return "question";
  if (status.phase === "running") return "running";
  if (status.phase === "pending") return "queued";
  return status.outcome ?? status.phase;
}

export class SessionsGrid {
  readonly entries = new Map<string, SessionEntry>();
  selected: string | undefined;

  constructor(private readonly container: HTMLElement) {}

  /** Replaces the listed Sessions, keeping the statuses already known. */
  setSessions(sessions: readonly Session[]): void {
    const seen = new Set<string>();
    for (const session of sessions) {
      seen.add(session.id);
      const entry = this.entries.get(session.id);
      if (entry) entry.session = session;
      else this.entries.set(session.id, { session, turn: undefined, touchedAt: session.updatedAt });
    }
    for (const id of [...this.entries.keys()]) if (!seen.has(id)) this.entries.delete(id);
    this.render();
  }

  /** A Turn read directly (the latest of a Session): applied unless a newer revision is known. */
  setTurn(turn: Turn): void {
    const entry = this.entries.get(turn.sessionId);
    if (!entry) return;
    const current = entry.turn;
    if (current && current.turnId === turn.id && current.revision > turn.revision) return;
    if (current && current.turnId !== turn.id && current.sequence !== undefined && current.sequence > turn.sequence) return;
    const before = statusWord(current);
    entry.turn = statusOfTurn(turn);
    // A streamed Turn reports every delta: redraw only when the card would change.
    if (current?.turnId !== turn.id || statusWord(entry.turn) !== before) this.render();
  }

  apply(event: ServerWatchEvent): void {
    switch (event.type) {
      case "server.ready":
      case "server.cursor":
      case "server.activity":
        return;
      case "session.created": {
        const entry = this.entries.get(event.session.id);
        if (entry) entry.session = event.session;
        else this.entries.set(event.session.id, { session: event.session, turn: undefined, touchedAt: Date.now() });
        break;
      }
      case "session.title": {
        const entry = this.entries.get(event.sessionId);
        if (!entry) return;
        entry.session = { ...entry.session, title: event.title, updatedAt: event.updatedAt };
        break;
      }
      case "session.deleted":
        this.entries.delete(event.sessionId);
        break;
      default: {
        const entry = this.entries.get(event.sessionId);
        if (!entry) return;
        entry.touchedAt = Date.now();
        if (event.type === "session.turn.snapshot") {
          this.setTurn(event.turn);
          return;
        }
        let status = entry.turn;
        if (!status || status.turnId !== event.turnId) {
          // A Turn this page has not seen yet is the Session's newest.
          status = { turnId: event.turnId, sequence: undefined, revision: -1, phase: "running", outcome: undefined, approvals: new Set(), questions: new Set() };
          entry.turn = status;
        }
        if (event.revision < status.revision) return;
        status.revision = event.revision;
        switch (event.type) {
          case "session.turn.started":
            status.phase = "running";
            break;
          case "session.turn.approval.requested":
            status.approvals.add(event.request.id);
            break;
          case "session.turn.approval.resolved":
            status.approvals.delete(event.requestId);
            break;
          case "session.turn.question.asked":
            status.questions.add(event.request.id);
            break;
          case "session.turn.question.replied":
          case "session.turn.question.rejected":
            status.questions.delete(event.requestId);
            break;
          case "session.turn.finished":
            status.phase = event.outcome.kind === "completed" ? "completed" : event.outcome.kind === "cancelled" ? "cancelled" : "failed";
            status.outcome = event.outcome.kind;
            status.approvals.clear();
            status.questions.clear();
            break;
          default:
            break;
        }
      }
    }
    this.render();
  }

  render(): void {
    const entries = [...this.entries.values()].sort((a, b) => Math.max(b.touchedAt, b.session.updatedAt) - Math.max(a.touchedAt, a.session.updatedAt));
    if (entries.length === 0) {
      replaceChildren(this.container, h("p", { class: "empty" }, "No Sessions yet."));
      return;
    }
    replaceChildren(
      this.container,
      ...entries.map((entry) => {
        const word = statusWord(entry.turn);
        const { session } = entry;
        return h(
          "a",
          {
            href: sessionHref(session.id),
            class: `card${this.selected === session.id ? " selected" : ""}`,
            "data-session-id": session.id,
          },
          h("span", { class: "card-title" }, session.title ?? session.id.slice(0, 8)),
          h("span", { class: `pill status-${word}`, "data-status": word }, word),
          h("span", { class: "card-meta mono" }, session.workdir),
          h("span", { class: "card-meta" }, session.defaultModel ?? "", session.defaultModel ? " · " : "", `updated ${time(Math.max(entry.touchedAt, session.updatedAt))}`),
        );
      }),
    );
  }
}

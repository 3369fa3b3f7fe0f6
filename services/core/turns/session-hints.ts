// What admission reads of a Session before its transaction (the workdir whose project, AGENTS.md
// and Skills it loads; the default model and agent it prepares), remembered from the Session row
// the previous admission locked, so a warm Session's prompt skips that read. A hint only: the
// admission validates against the row it locks, and when the fields the hint decided differ
// (the Session was changed meanwhile, here or on another host) it throws `StaleSessionHint`, the
// caller forgets the hint and admits again from a fresh read.
import type { SessionRow } from "../../storage/index.js";

/** The admission's locked row disagrees with the hint it prepared from. */
export class StaleSessionHint extends Error {
  constructor() {
    super("the Session changed since its admission hint was taken");
  }
}

/** The fields of a Session that what admission prepares before its transaction depends on. */
export function hintKey(row: Pick<SessionRow, "workdir" | "defaultModel" | "agent" | "spawnedFromSessionId">): string {
  return JSON.stringify([row.workdir, row.defaultModel, row.agent, row.spawnedFromSessionId]);
}

/** Recently admitted Sessions' rows by server and id (least recently used dropped past `capacity`). */
export class SessionHints {
  private readonly rows = new Map<string, SessionRow>();

  constructor(private readonly capacity = 256) {}

  get(server: string, sessionId: string): SessionRow | undefined {
    return this.rows.get(`${server}\0${sessionId}`);
  }

  set(row: SessionRow): void {
    const key = `${row.server}\0${row.id}`;
    this.rows.delete(key);
    this.rows.set(key, row);
    if (this.rows.size > this.capacity) this.rows.delete(this.rows.keys().next().value!);
  }

  delete(server: string, sessionId: string): void {
    this.rows.delete(`${server}\0${sessionId}`);
  }
}

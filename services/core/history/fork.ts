// Forks (`forkSession`): a new Session with a caller-chosen id holding a copy of the source's
// settled history — all of it, the history before a `turnId` (that Turn stays behind for
// resending), or through a `through` boundary inclusively (a Turn message selects its whole
// Turn, a conversation entry itself) — restricted by `visibility` to what the forking actor may
// observe. The fork inherits the workdir, default model, system prompt, agent and permission
// configuration and records `forkedFrom`; saved grants and unsettled work stay behind. The copy
// (Turn rows with transcripts, parts and steering input; entries) gets fresh ids derived from
// the fork's id, so the fork never depends on the source. The same request replays to the
// original Session; a different one (or a taken or retired id) is a 409.
import { createHash } from "node:crypto";
import type { ForkSessionRequest, ForkedFrom, Session, Steer } from "../../../generated/client/types.gen.js";
import { conflict, notFound, validationFailure } from "../../contract/failure.js";
import { getSession, getSessionById, history as store, isRetired, turns, type SessionRow, type StorageHandle } from "../../storage/index.js";
import type { ActivityHub } from "../events/hub.js";
import { requestHash, toSession } from "../sessions.js";
import { checkVisibility, isVisible, normalizeVisibility } from "./visibility.js";

export interface ForkServiceOptions {
  readonly storage: StorageHandle;
  readonly hub?: ActivityHub | undefined;
  readonly now?: () => number;
}

/** A stable id for a copied row: the same fork of the same row always gets the same id. */
export function forkedId(forkedSessionId: string, sourceId: string): string {
  const hex = createHash("sha256").update(`ze-harness fork\u0000${forkedSessionId}\u0000${sourceId}`).digest("hex");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Every string in `value` that is a key of `ids`, replaced (ids never occur as parts of other strings that matter). */
function rewriteIds(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => rewriteIds(item, ids));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewriteIds(item, ids)]));
  return value;
}

const SETTLED = new Set(["completed", "cancelled", "failed", "settled"]);

export class ForkService {
  private readonly now: () => number;

  constructor(private readonly options: ForkServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async fork(server: string, sessionId: string, forkedSessionId: string, body: ForkSessionRequest | null | undefined): Promise<Session> {
    const { storage } = this.options;
    const request: ForkSessionRequest = body ?? {};
    // An absent body, null and {} are the same request: fork everything settled.
    const hash = requestHash({ fork: sessionId, ...request });
    // A replay answers the original fork, even after its source is gone.
    const replay = await this.replay(server, forkedSessionId, hash);
    if (replay) return replay;
    const source = await getSession(storage, server, sessionId);
    if (!source) throw notFound("session", `Session ${sessionId} does not exist`);
    if (request.turnId !== undefined && request.through !== undefined) throw validationFailure("Invalid request: /through: give either turnId or through, not both");
    await checkVisibility(storage, source, request.visibility, source.historyRevision + 1);

    const index = await store.listHistoryIndex(storage, sessionId, source.historyRevision + 1);
    const find = (kind: "turn" | "entry", id: string, field: string) => {
      const item = index.find((candidate) => candidate.kind === kind && candidate.id === id);
      if (!item) throw validationFailure(`Invalid request: ${field}: ${id} is not a ${kind === "turn" ? "Turn" : "conversation entry"} of Session ${sessionId}`);
      return item;
    };
    let last = Number.POSITIVE_INFINITY;
    const bounded = request.turnId !== undefined || request.through !== undefined;
    if (request.turnId !== undefined) last = find("turn", request.turnId, "/turnId").revision - 1;
    else if (request.through?.kind === "turnMessage") {
      const turn = find("turn", request.through.turnId, "/through/turnId");
      if (!SETTLED.has(turn.phase)) throw conflict(`Turn ${turn.id} has not settled; only settled history can be forked`);
      if (!Number.isSafeInteger(request.through.messageIndex) || request.through.messageIndex < 0 || request.through.messageIndex >= turn.messageCount) {
        throw validationFailure(`Invalid request: /through/messageIndex: Turn ${turn.id} has messages 0 to ${turn.messageCount - 1}, not ${request.through.messageIndex}`);
      }
      last = turn.revision;
    } else if (request.through?.kind === "conversationEntry") last = find("entry", request.through.entryId, "/through/entryId").revision;

    const visibility = normalizeVisibility(request.visibility);
    const selected = index.filter((item) => item.revision <= last && isVisible(visibility, item));
    const unsettled = selected.find((item) => !SETTLED.has(item.phase));
    // An explicit boundary must enclose only settled work; the whole history leaves running work behind.
    if (bounded && unsettled) throw conflict(`Turn ${unsettled.id} before the fork boundary has not settled; only settled history can be forked`);
    const items = selected.filter((item) => SETTLED.has(item.phase));

    const steers = await turns.listSteers(storage, items.filter((item) => item.kind === "turn").map((item) => item.id));
    const ids = new Map<string, string>([[sessionId, forkedSessionId]]);
    for (const item of items) ids.set(item.id, forkedId(forkedSessionId, item.id));
    for (const steer of steers) ids.set((steer.data as Steer).steerId, forkedId(forkedSessionId, (steer.data as Steer).steerId));

    const forkedFrom: ForkedFrom = {
      parentSessionId: sessionId,
      ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
      ...(request.through !== undefined ? { through: request.through } : {}),
      ...(request.visibility !== undefined ? { visibility: request.visibility } : {}),
    };
    const now = this.now();
    let row: SessionRow;
    try {
      row = await store.insertFork(storage, {
        session: {
          id: forkedSessionId,
          server,
          workdir: source.workdir,
          projectId: source.projectId,
          title: null,
          defaultModel: source.defaultModel,
          systemPrompt: source.systemPrompt,
          agent: source.agent,
          forkedFrom,
          spawnedFromSessionId: null,
          configurationRevision: 1,
          permissions: source.permissions,
          approval: source.approval,
          createdAt: now,
          updatedAt: now,
          createRequestHash: hash,
        },
        items: items.map((item) => ({ kind: item.kind, sourceId: item.id })),
        idOf: (id) => ids.get(id) ?? forkedId(forkedSessionId, id),
        rewrite: (value) => rewriteIds(value, ids),
      });
    } catch (error) {
      // A concurrent fork to the same id that won answers like a replay.
      const raced = await this.replay(server, forkedSessionId, hash);
      if (raced) return raced;
      throw error;
    }
    this.options.hub?.changed(server, forkedSessionId);
    return toSession(row);
  }

  private async replay(server: string, forkedSessionId: string, hash: string): Promise<Session | undefined> {
    if (await isRetired(this.options.storage, server, forkedSessionId)) throw conflict(`Session ${forkedSessionId} was deleted; its id stays retired`);
    const existing = await getSessionById(this.options.storage, forkedSessionId);
    if (!existing) return undefined;
    if (existing.server !== server || existing.createRequestHash !== hash) throw conflict(`Session ${forkedSessionId} already exists with a different request`);
    return toSession(existing);
  }
}

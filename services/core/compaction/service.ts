// Manual context compactions: admission (`submitContextCompaction`, replay by `compactionId`:
// the same body returns the original receipt, a different one is a 409), reads, the Session's
// compaction page in (sequence, ordinal) order, and cancellation. An admitted compaction takes
// the Session's next work sequence and history revision, so it runs in order with the Turns
// when the Session is idle (the runner claims it) and compacts exactly what was admitted before.
import { randomUUID } from "node:crypto";
import type {
  Attribution,
  Compaction,
  ContextCompactionReceipt,
  ListSessionCompactionsData,
  SessionCompactionsResponse,
  SubmitContextCompactionRequest,
} from "../../../generated/client/types.gen.js";
import type { Config } from "../../config/index.js";
import { conflict, notFound, validationFailure, type Failure } from "../../contract/failure.js";
import { compactions as store, getSession, type StorageHandle } from "../../storage/index.js";
import type { ActivityHub } from "../events/hub.js";
import { checkVisibility, normalizeVisibility, visibilityKey } from "../history/visibility.js";
import { pageLimit, parseCount, parsePosition } from "../history/query.js";
import { requestHash, toSession } from "../sessions.js";
import type { ModelAvailability } from "../turns/service.js";
import { resolvePolicy } from "../turns/policy.js";
import { checkModelReference } from "../validation.js";
import { compactionReceipt, isSettled, toCompaction } from "./codec.js";
import { interruptCompaction } from "./execute.js";

export interface CompactionServiceOptions {
  readonly storage: StorageHandle;
  readonly config: Config;
  readonly hub: ActivityHub;
  readonly models: ModelAvailability;
  readonly now?: () => number;
  /** The local runner: an embedded host runs the Sessions it operates on. */
  readonly runner?: { adopt(sessionId: string): void } | undefined;
}

const compactionNotFound = (id: string): Failure => notFound("context_compaction", `Context compaction ${id} does not exist`);

export class CompactionService {
  private readonly now: () => number;

  constructor(private readonly options: CompactionServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  private async session(server: string, sessionId: string) {
    const row = await getSession(this.options.storage, server, sessionId);
    if (!row) throw notFound("session", `Session ${sessionId} does not exist`);
    return row;
  }

  private async row(server: string, sessionId: string, compactionId: string) {
    await this.session(server, sessionId);
    const row = await store.getCompaction(this.options.storage, compactionId);
    if (!row || row.sessionId !== sessionId) throw compactionNotFound(compactionId);
    return row;
  }

  async submit(server: string, sessionId: string, clientId: string, request: SubmitContextCompactionRequest): Promise<ContextCompactionReceipt> {
    const hash = requestHash(request);
    const replay = await this.replay(sessionId, request.compactionId, hash);
    if (replay) return replay;
    const { storage, config, models } = this.options;
    try {
      const admitted = await store.admitCompaction(storage, { server, sessionId }, async (sessionRow) => {
        checkModelReference(request.model, "/model");
        const model = request.model ?? sessionRow.defaultModel ?? config.model;
        if (model === undefined) {
          throw validationFailure("Invalid request: /model: no model to summarize with: pass `model`, set the Session's default model, or set \"model\" in the config file");
        }
        await models.check(model);
        await checkVisibility(storage, sessionRow, request.visibility, sessionRow.historyRevision + 1);
        const visibility = normalizeVisibility(request.visibility);
        const attribution: Attribution = request.authorId !== undefined ? { clientId, authorId: request.authorId } : { clientId };
        return {
          id: request.compactionId,
          sessionId,
          turnId: null,
          trigger: { kind: "manual" },
          request: {
            sessionId,
            compactionId: request.compactionId,
            ...(request.model !== undefined ? { model: request.model } : {}),
            ...(request.visibility !== undefined ? { visibility: request.visibility } : {}),
          },
          attribution,
          model,
          modelLeaseId: `lease_${randomUUID().replaceAll("-", "")}`,
          requestOptionsId: randomUUID(),
          providerOptions: request.providerOptions ?? null,
          policy: resolvePolicy(config, toSession(sessionRow)),
          phase: "pending",
          visibilityKey: visibilityKey(visibility),
          throughHistoryRevision: null,
          cancellation: null,
          usage: null,
          outcome: null,
          acceptedAt: this.now(),
          startedAt: null,
          completedAt: null,
          requestHash: hash,
          ownerProcessId: null,
          ownerInstance: null,
          leaseExpiresAt: null,
        };
      });
      if (!admitted) throw notFound("session", `Session ${sessionId} does not exist`);
      // The runner claims it when the Session is idle: an embedded host runs the Sessions it operates on.
      this.options.runner?.adopt(sessionId);
      this.options.hub.workAvailable();
      return compactionReceipt(admitted.compaction);
    } catch (error) {
      // A concurrent admission of the same id that won answers like a replay.
      const raced = await this.replay(sessionId, request.compactionId, hash);
      if (raced) return raced;
      throw error;
    }
  }

  private async replay(sessionId: string, compactionId: string, hash: string): Promise<ContextCompactionReceipt | undefined> {
    const existing = await store.getCompaction(this.options.storage, compactionId);
    if (!existing) return undefined;
    if (existing.sessionId !== sessionId || existing.requestHash !== hash) throw conflict(`Context compaction ${compactionId} was already admitted with a different request`);
    return compactionReceipt(existing);
  }

  async get(server: string, sessionId: string, compactionId: string): Promise<Compaction> {
    return toCompaction(await this.row(server, sessionId, compactionId));
  }

  async list(server: string, sessionId: string, query: ListSessionCompactionsData["query"]): Promise<SessionCompactionsResponse> {
    const session = await this.session(server, sessionId);
    const limit = pageLimit(query?.limit);
    const after = parsePosition(query, "afterSequence", "afterOrdinal", Number.MAX_SAFE_INTEGER) ?? [0, 0];
    // The fence the page (and its continuation) is stable through: a sequence alone means its compactions so far.
    const fence = parsePosition(query, "throughSequence", "throughOrdinal", -1);
    const through: [number, number] = fence && fence[1] >= 0 ? fence : await store.lastCompactionPosition(this.options.storage, sessionId, fence?.[0]);
    const activityCursor = parseCount(query?.snapshotActivityCursor, "snapshotActivityCursor", 0) ?? session.activityCursor;
    const rows = await store.listCompactions(this.options.storage, sessionId, { after, through, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const response: SessionCompactionsResponse = {
      sessionId,
      boundary: { throughSequence: through[0], throughOrdinal: through[1], activityCursor },
      compactions: page.map((row) => ({ sequence: row.sequence, ordinal: row.ordinal, compaction: toCompaction(row) })),
    };
    const last = page.at(-1);
    if (rows.length > limit && last) response.next = { sequence: last.sequence, ordinal: last.ordinal };
    return response;
  }

  /**
   * Cancels a compaction: a pending one settles as cancelled at once; a running one records the
   * request and is stopped (here, or by its runner's next maintenance pass); a settled one is
   * returned unchanged.
   */
  async cancel(server: string, sessionId: string, compactionId: string, reason: string | undefined): Promise<Compaction> {
    const row = await this.row(server, sessionId, compactionId);
    if (isSettled(row.phase) || row.cancellation !== null) return toCompaction(row);
    const requestedAt = this.now();
    const cancellation = reason !== undefined ? { reason, requestedAt } : { requestedAt };
    if (row.phase === "pending") {
      const outcome = { kind: "cancelled" as const, ...(reason !== undefined ? { reason } : {}) };
      const cancelled = await store.changeCompaction(this.options.storage, compactionId, {
        patch: { phase: "cancelled", cancellation, outcome, completedAt: requestedAt },
        expectPhases: ["pending"],
      });
      if (cancelled) {
        // Work queued behind it may start now.
        this.options.hub.workAvailable();
        return toCompaction(cancelled);
      }
      // It started meanwhile: cancel it as a running compaction.
    }
    await store.changeCompaction(this.options.storage, compactionId, { patch: { cancellation }, expectPhases: ["running"] });
    interruptCompaction(compactionId, reason !== undefined ? { kind: "cancelled", reason } : { kind: "cancelled" });
    return toCompaction(await this.row(server, sessionId, compactionId));
  }
}

// Replies to what a running Turn waits for: permission requests (once / always / reject)
// and questions (reply / reject). Each reply is one transaction that re-reads the waiting
// part, settles it, appends its event and (for `always`) saves the Session grant; the runner
// waiting on the part sees the change and continues.
import { randomUUID } from "node:crypto";
import type {
  PendingDescendantApproval,
  PendingDescendantQuestion,
  PermissionReply,
  ToolTurnPart,
  Turn,
  TurnPart,
} from "../../../generated/client/types.gen.js";
import {
  getSession,
  insertSavedPermission,
  listChildren,
  turns as store,
  type NewTurnEvent,
  type PartWrite,
  type StorageHandle,
  type StorageTransaction,
  type TurnPartRow,
  type TurnRow,
} from "../../storage/index.js";
import type { ActivityHub } from "../events/hub.js";
import { conflict, notFound, validationFailure } from "../../contract/failure.js";
import { toTurn } from "./codec.js";
import { observeEvents } from "./observe.js";
import { toolFields } from "./running.js";

export interface InteractionServiceOptions {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly now?: () => number;
}

interface LocatedPart {
  readonly turn: TurnRow;
  readonly row: TurnPartRow;
  readonly part: ToolTurnPart;
}

const isTool = (part: TurnPart): part is ToolTurnPart => part.type === "tool";


export class InteractionService {
  private readonly storage: StorageHandle;
  private readonly hub: ActivityHub;
  private readonly now: () => number;

  constructor(options: InteractionServiceOptions) {
    this.storage = options.storage;
    this.hub = options.hub;
    this.now = options.now ?? Date.now;
  }

  private async requireSession(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }

  /** Tool parts of the Session's running Turns, read inside `tx` (or the pool). */
  private async toolParts(context: StorageHandle | StorageTransaction, sessionId: string): Promise<LocatedPart[]> {
    const running = await store.turnsInPhases(context, sessionId, ["running"]);
    const rows = await store.listParts(context, running.map((turn) => turn.id));
    const out: LocatedPart[] = [];
    for (const row of rows) {
      const part = row.data as TurnPart;
      if (isTool(part)) out.push({ turn: running.find((turn) => turn.id === row.turnId)!, row, part });
    }
    return out;
  }

  /**
   * The running Turns' tool parts of the Session that owns the part `matches` finds: the Session
   * itself, else the nearest of its spawned descendants (a reply addressed to a parent for a
   * sub-agent's request is forwarded to the owning child).
   */
  private async locate(tx: StorageTransaction, server: string, sessionId: string, matches: (part: ToolTurnPart) => boolean): Promise<{ sessionId: string; parts: LocatedPart[]; target: LocatedPart } | undefined> {
    let frontier = [sessionId];
    const seen = new Set<string>();
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const id of frontier) {
        if (seen.has(id)) continue;
        seen.add(id);
        const parts = await this.toolParts(tx, id);
        const target = parts.find((located) => matches(located.part));
        if (target) return { sessionId: id, parts, target };
        for (const child of await listChildren(tx, server, id)) next.push(child.id);
      }
      frontier = next;
    }
    return undefined;
  }

  private async render(turnId: string): Promise<Turn> {
    const row = (await store.getTurnById(this.storage, turnId))!;
    const [parts, steers] = await Promise.all([store.listParts(this.storage, [turnId]), store.listSteers(this.storage, [turnId])]);
    return toTurn(row, parts, steers);
  }

  /** Settles several parts of possibly several Turns in the running transaction. */
  private async settle(tx: StorageTransaction, changes: Map<string, { parts: PartWrite[]; events: NewTurnEvent[] }>, written: Map<string, NewTurnEvent[]>): Promise<void> {
    written.clear();
    for (const [turnId, change] of changes) {
      await store.changeTurn(tx, turnId, { parts: change.parts, events: change.events, expectPhases: ["running"] });
      written.set(turnId, change.events);
    }
  }

  /** What a committed reply recorded goes to the Turns' subscribers (services/core/turns/observe.ts). */
  private observe(written: ReadonlyMap<string, NewTurnEvent[]>): void {
    for (const [turnId, events] of written) observeEvents(turnId, events);
  }

  async replyPermission(server: string, sessionId: string, requestId: string, reply: PermissionReply, message: string | undefined): Promise<{ requestId: string; turn: Turn }> {
    await this.requireSession(server, sessionId);
    const resolvedAt = this.now();
    const written = new Map<string, NewTurnEvent[]>();
    const owner = await this.storage.transaction(async (tx) => {
      const found = await this.locate(tx, server, sessionId, (part) => part.approval.state !== "none" && part.approval.request.id === requestId);
      const parts = found?.parts ?? [];
      const target = found?.target;
      if (!found || !target) {
        // A settled Turn keeps its parts: a late reply to it is a conflict, an unknown id is not found.
        throw notFound("permission_request", `Permission request ${requestId} is not pending in Session ${sessionId}`);
      }
      const approval = target.part.approval;
      if (approval.state === "resolved") {
        if (approval.reply === reply) return { turnId: target.turn.id, sessionId: found.sessionId };
        throw conflict(`Permission request ${requestId} was already resolved`);
      }
      if (approval.state !== "pending") throw notFound("permission_request", `Permission request ${requestId} is not pending`);
      const changes = new Map<string, { parts: PartWrite[]; events: NewTurnEvent[] }>();
      const resolve = (located: LocatedPart, decision: "allow" | "deny", replyValue: PermissionReply, replyMessage: string | undefined): void => {
        if (located.part.approval.state !== "pending") return;
        const request = located.part.approval.request;
        const resolved: ToolTurnPart = {
          ...located.part,
          approval: {
            state: "resolved",
            request,
            requestedAt: located.part.approval.requestedAt,
            resolvedAt,
            decision,
            source: "remote",
            reply: replyValue,
            ...(replyMessage !== undefined ? { replyMessage } : {}),
          },
        };
        const change = changes.get(located.turn.id) ?? { parts: [], events: [] };
        change.parts.push({ ordinal: located.row.ordinal, data: resolved });
        change.events.push({
          type: "turn.approval.resolved",
          data: {
            ...toolFields(located.part),
            requestId: request.id,
            decision,
            source: "remote",
            reply: replyValue,
            ...(replyMessage !== undefined ? { replyMessage } : {}),
            resolvedAt,
          },
        });
        changes.set(located.turn.id, change);
      };
      if (reply === "reject") {
        resolve(target, "deny", "reject", message);
        // A rejection also denies the Session's other pending requests.
        for (const other of parts) if (other !== target) resolve(other, "deny", "reject", undefined);
      } else {
        resolve(target, "allow", reply, message);
        if (reply === "always") {
          for (const pattern of approval.request.save ?? []) {
            await insertSavedPermission(tx, {
              id: randomUUID(),
              sessionId: found.sessionId,
              action: approval.request.action,
              resource: pattern,
              createdAt: resolvedAt,
              sourcePermissionRequestId: requestId,
            });
          }
        }
      }
      await this.settle(tx, changes, written);
      return { turnId: target.turn.id, sessionId: found.sessionId };
    });
    this.observe(written);
    this.hub.changed(server, owner.sessionId);
    return { requestId, turn: await this.render(owner.turnId) };
  }

  async replyQuestion(server: string, sessionId: string, requestId: string, answers: string[][] | undefined): Promise<{ requestId: string; turn: Turn }> {
    await this.requireSession(server, sessionId);
    const resolvedAt = this.now();
    const written = new Map<string, NewTurnEvent[]>();
    const owner = await this.storage.transaction(async (tx) => {
      const found = await this.locate(tx, server, sessionId, (part) => part.question?.request.id === requestId);
      const target = found?.target;
      const question = target?.part.question;
      if (!target || !question) throw notFound("question_request", `Question request ${requestId} is not pending in Session ${sessionId}`);
      if (question.state !== "pending") {
        const same = answers === undefined ? question.state === "dismissed" : question.state === "answered" && JSON.stringify(question.answers) === JSON.stringify(answers);
        if (same) return { turnId: target.turn.id, sessionId: found!.sessionId };
        throw conflict(`Question request ${requestId} was already ${question.state}`);
      }
      if (answers !== undefined && answers.length !== question.request.questions.length) {
        throw validationFailure(`Invalid request: question request ${requestId} asks ${question.request.questions.length} question(s); ${answers.length} answer(s) given`);
      }
      const settled: ToolTurnPart = {
        ...target.part,
        question:
          answers === undefined
            ? { state: "dismissed", request: question.request, requestedAt: question.requestedAt, resolvedAt }
            : { state: "answered", request: question.request, requestedAt: question.requestedAt, resolvedAt, answers },
      };
      const event: NewTurnEvent =
        answers === undefined
          ? { type: "turn.question.rejected", data: { ...toolFields(target.part), requestId, resolvedAt } }
          : { type: "turn.question.replied", data: { ...toolFields(target.part), requestId, answers, resolvedAt } };
      await this.settle(tx, new Map([[target.turn.id, { parts: [{ ordinal: target.row.ordinal, data: settled }], events: [event] }]]), written);
      return { turnId: target.turn.id, sessionId: found!.sessionId };
    });
    this.observe(written);
    this.hub.changed(server, owner.sessionId);
    return { requestId, turn: await this.render(owner.turnId) };
  }

  /** Pending approvals of the Session's spawned descendants, oldest first. */
  async descendantApprovals(server: string, sessionId: string): Promise<PendingDescendantApproval[]> {
    const out: PendingDescendantApproval[] = [];
    for (const { id, agent } of await this.descendants(server, sessionId)) {
      for (const located of await this.toolParts(this.storage, id)) {
        if (located.part.approval.state === "pending") {
          out.push({ request: located.part.approval.request, requestedAt: located.part.approval.requestedAt, ...(agent ? { agent } : {}) });
        }
      }
    }
    return out.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** Pending questions of the Session's spawned descendants, oldest first. */
  async descendantQuestions(server: string, sessionId: string): Promise<PendingDescendantQuestion[]> {
    const out: PendingDescendantQuestion[] = [];
    for (const { id, agent } of await this.descendants(server, sessionId)) {
      for (const located of await this.toolParts(this.storage, id)) {
        const question = located.part.question;
        if (question?.state === "pending") out.push({ request: question.request, requestedAt: question.requestedAt, ...(agent ? { agent } : {}) });
      }
    }
    return out.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  private async descendants(server: string, sessionId: string): Promise<{ id: string; agent: string | null }[]> {
    await this.requireSession(server, sessionId);
    const out: { id: string; agent: string | null }[] = [];
    let frontier = [sessionId];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const parent of frontier) {
        for (const child of await listChildren(this.storage, server, parent)) {
          out.push({ id: child.id, agent: child.agent });
          next.push(child.id);
        }
      }
      frontier = next;
    }
    return out;
  }
}

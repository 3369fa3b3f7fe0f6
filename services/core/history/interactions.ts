// The interactions a reconnecting client rebuilds and answers: the permission requests and
// question batches of the Session's Turns, as originally recorded (`pendingInteractions`,
// `interaction`), and `respond`, which records the answer through the same replies as
// replyPermission / replyQuestion / rejectQuestion. A lost `respond` response is recovered by
// reading the interaction (its state and the Turn) or by sending the identical answer, which
// replays the original result; a different answer to a resolved request is 409.
import type { Interaction, PendingInteractionsResponse, RespondRequest, RespondResponse, ToolTurnPart, Turn, TurnPart } from "../../../generated/client/types.gen.js";
import { conflict, notFound, validationFailure } from "../../contract/failure.js";
import { toTurn } from "../turns/codec.js";
import { getSession, historyRows, turns as store, type StorageHandle } from "../../storage/index.js";
import type { InteractionService } from "../turns/interactions.js";

/** The interactions one Tool part records (a permission request, a question batch, or both). */
export function interactionsOf(part: ToolTurnPart): Interaction[] {
  const out: Interaction[] = [];
  const base = { toolId: part.toolId, toolCallId: part.toolCallId };
  const approval = part.approval;
  if (approval.state !== "none") {
    const item: Interaction = {
      kind: "permission",
      state: approval.state === "pending" ? "pending" : "resolved",
      requestId: approval.request.id,
      turnId: approval.request.turnId,
      ...base,
      permission: approval.request,
      requestedAt: approval.requestedAt,
    };
    if (approval.state === "resolved") item.resolvedAt = approval.resolvedAt;
    out.push(item);
  }
  const question = part.question;
  if (question) {
    const item: Interaction = {
      kind: "question",
      state: question.state === "pending" ? "pending" : "resolved",
      requestId: question.request.id,
      turnId: question.request.turnId,
      ...base,
      question: question.request,
      requestedAt: question.requestedAt,
    };
    if (question.state !== "pending") item.resolvedAt = question.resolvedAt;
    out.push(item);
  }
  return out;
}

export class Interactions {
  constructor(
    private readonly storage: StorageHandle,
    private readonly replies: InteractionService,
  ) {}

  private async requireSession(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }

  /** The pending interactions of the Session's running Turns, oldest first (no Session check). */
  async pendingOf(sessionId: string): Promise<Interaction[]> {
    const running = await store.turnsInPhases(this.storage, sessionId, ["running"]);
    if (running.length === 0) return [];
    const parts = await store.listParts(this.storage, running.map((turn) => turn.id));
    return parts
      .map((row) => row.data as TurnPart)
      .filter((part): part is ToolTurnPart => part.type === "tool")
      .flatMap(interactionsOf)
      .filter((item) => item.state === "pending")
      .sort((a, b) => a.requestedAt - b.requestedAt);
  }

  async pending(server: string, sessionId: string): Promise<PendingInteractionsResponse> {
    await this.requireSession(server, sessionId);
    return { sessionId, interactions: await this.pendingOf(sessionId) };
  }

  async get(server: string, sessionId: string, requestId: string): Promise<Interaction> {
    await this.requireSession(server, sessionId);
    const found = await historyRows.findRequestPart(this.storage.reader().sql, sessionId, requestId);
    const item = found ? interactionsOf(found.data as ToolTurnPart).find((candidate) => candidate.requestId === requestId) : undefined;
    if (!item) throw notFound(found ? "question_request" : "permission_request", `Interaction ${requestId} does not exist in Session ${sessionId}`);
    return item;
  }

  private async turn(turnId: string): Promise<Turn> {
    const row = (await store.getTurnById(this.storage, turnId))!;
    const [parts, steers] = await Promise.all([store.listParts(this.storage, [turnId]), store.listSteers(this.storage, [turnId])]);
    return toTurn(row, parts, steers);
  }

  async respond(server: string, sessionId: string, requestId: string, body: RespondRequest): Promise<RespondResponse> {
    await this.requireSession(server, sessionId);
    const found = await historyRows.findRequestPart(this.storage.reader().sql, sessionId, requestId);
    const item = found ? interactionsOf(found.data as ToolTurnPart).find((candidate) => candidate.requestId === requestId) : undefined;
    if (!found || !item) throw notFound("permission_request", `Interaction ${requestId} does not exist in Session ${sessionId}`);
    const wanted = body.kind === "permission" ? "permission" : "question";
    if (item.kind !== wanted) throw validationFailure(`Invalid request: body.kind: interaction ${requestId} is a ${item.kind} request; answer it with kind ${item.kind === "permission" ? "permission" : "question or dismiss"}`);
    if (item.state === "resolved") {
      // The original receipt: the same answer replays it (whether or not the Turn has settled
      // since); any other answer is refused.
      const part = found.data as ToolTurnPart;
      const same =
        body.kind === "permission"
          ? part.approval.state === "resolved" && part.approval.reply === body.reply
          : body.kind === "question"
            ? part.question?.state === "answered" && JSON.stringify(part.question.answers) === JSON.stringify(body.answers)
            : part.question?.state === "dismissed";
      if (!same) throw conflict(`Interaction ${requestId} was already resolved with another answer`);
      return { interaction: item, turn: await this.turn(found.turnId) };
    }
    const replied =
      body.kind === "permission"
        ? await this.replies.replyPermission(server, sessionId, requestId, body.reply, body.message)
        : await this.replies.replyQuestion(server, sessionId, requestId, body.kind === "question" ? body.answers : undefined);
    return { interaction: await this.get(server, sessionId, requestId), turn: replied.turn };
  }
}

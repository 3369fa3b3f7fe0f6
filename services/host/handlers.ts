// Binds the contract's handlers to the core services. Each handler takes the
// validated input and returns the declared status and body; typed failures
// thrown by services are encoded by the HTTP edge.
import type { Handlers } from "../../generated/server/routes.js";
import type { EventStreams } from "../core/events/streams.js";
import { parseCursor } from "../core/events/streams.js";
import { validationFailure } from "../contract/failure.js";
import type { SessionService } from "../core/sessions.js";
import type { InteractionService } from "../core/turns/interactions.js";
import type { TurnService } from "../core/turns/service.js";
import { PROTOCOL_VERSION, type RequestContext } from "../http/handler.js";

export interface HandlerServices {
  readonly sessions: SessionService;
  readonly release: string;
}

export interface TurnHandlerServices {
  readonly turns: TurnService;
  readonly interactions: InteractionService;
  readonly streams: EventStreams;
}

type Implemented = Pick<
  Handlers<RequestContext>,
  | "health"
  | "capabilities"
  | "createSession"
  | "getSession"
  | "listSessions"
  | "deleteSession"
  | "deleteServer"
  | "setSessionTitle"
  | "setSessionDefaultModel"
  | "getSessionConfiguration"
  | "replaceSessionConfiguration"
  | "listSessionChildren"
  | "listSavedPermissions"
  | "removeSavedPermission"
>;

export function sessionHandlers({ sessions, release }: HandlerServices): Implemented {
  return {
    health: async () => ({ status: 200, body: { status: "ok" } }),
    capabilities: async () => ({
      status: 200,
      body: { backgroundSubagents: true, protocolVersion: PROTOCOL_VERSION, harnessVersion: release },
    }),
    createSession: async ({ path, body }) => ({
      status: 200,
      body: { session: await sessions.create(path.server, path.sessionId, body ?? {}) },
    }),
    getSession: async ({ path }) => ({ status: 200, body: { session: await sessions.get(path.server, path.sessionId) } }),
    listSessions: async ({ path, query }) => ({
      status: 200,
      body: { sessions: await sessions.list(path.server, query?.projectId) },
    }),
    deleteSession: async ({ path }) => ({
      status: 200,
      body: { deleted: await sessions.delete(path.server, path.sessionId) },
    }),
    deleteServer: async ({ path, query }) => ({
      status: 200,
      body: { deleted: await sessions.deleteServer(path.server, query?.projectId) },
    }),
    setSessionTitle: async ({ path, body }) => ({
      status: 200,
      body: { session: await sessions.setTitle(path.server, path.sessionId, body.title) },
    }),
    setSessionDefaultModel: async ({ path, body }) => ({
      status: 200,
      body: { session: await sessions.setDefaultModel(path.server, path.sessionId, body.defaultModel) },
    }),
    getSessionConfiguration: async ({ path }) => ({
      status: 200,
      body: { configuration: await sessions.configuration(path.server, path.sessionId) },
    }),
    replaceSessionConfiguration: async ({ path, body }) => ({
      status: 200,
      body: { configuration: await sessions.replaceConfiguration(path.server, path.sessionId, body) },
    }),
    listSessionChildren: async ({ path }) => ({
      status: 200,
      body: { sessions: await sessions.children(path.server, path.sessionId) },
    }),
    listSavedPermissions: async ({ path }) => ({
      status: 200,
      body: { permissions: await sessions.savedPermissions(path.server, path.sessionId) },
    }),
    removeSavedPermission: async ({ path }) => ({
      status: 200,
      body: { permission: await sessions.removeSavedPermission(path.server, path.sessionId, path.savedPermissionId) },
    }),
  };
}

type TurnOperations = Pick<
  Handlers<RequestContext>,
  | "submitPrompt"
  | "getTurn"
  | "listSessionTurns"
  | "cancelTurn"
  | "replyPermission"
  | "listDescendantPendingApprovals"
  | "replyQuestion"
  | "rejectQuestion"
  | "listDescendantPendingQuestions"
  | "watchTurn"
  | "watchSession"
  | "watchServer"
>;

/** A reconnecting EventSource's Last-Event-ID supersedes the query cursor. */
function resumeCursor(lastEventId: string | undefined, query: string | undefined, name: string): number | undefined {
  return parseCursor(lastEventId ?? query, lastEventId !== undefined ? "Last-Event-ID" : name);
}

export function turnHandlers({ turns, interactions, streams }: TurnHandlerServices): TurnOperations {
  return {
    submitPrompt: async ({ path, headers, body }) => ({
      status: 202,
      body: { receipt: await turns.submit(path.server, path.sessionId, headers["x-ze-harness-client-id"], body) },
    }),
    getTurn: async ({ path }) => ({ status: 200, body: { turn: await turns.get(path.server, path.sessionId, path.turnId) } }),
    listSessionTurns: async ({ path, query }) => ({ status: 200, body: await turns.list(path.server, path.sessionId, query) }),
    cancelTurn: async ({ path, body }) => ({
      status: 200,
      body: { turn: await turns.cancel(path.server, path.sessionId, path.turnId, body?.reason) },
    }),
    replyPermission: async ({ path, body }) => ({
      status: 200,
      body: await interactions.replyPermission(path.server, path.sessionId, path.permissionRequestId, body.reply, body.message),
    }),
    listDescendantPendingApprovals: async ({ path }) => ({
      status: 200,
      body: { approvals: await interactions.descendantApprovals(path.server, path.sessionId) },
    }),
    replyQuestion: async ({ path, body }) => ({
      status: 200,
      body: await interactions.replyQuestion(path.server, path.sessionId, path.questionRequestId, body.answers),
    }),
    rejectQuestion: async ({ path }) => ({
      status: 200,
      body: await interactions.replyQuestion(path.server, path.sessionId, path.questionRequestId, undefined),
    }),
    listDescendantPendingQuestions: async ({ path }) => ({
      status: 200,
      body: { questions: await interactions.descendantQuestions(path.server, path.sessionId) },
    }),
    watchTurn: async ({ path, query, headers }, context) => ({
      status: 200,
      stream: await streams.watchTurn(
        path.server,
        path.sessionId,
        path.turnId,
        resumeCursor(headers?.["last-event-id"], query?.afterRevision, "afterRevision"),
        context.signal,
      ),
    }),
    watchSession: async ({ path, query, headers }, context) => {
      const cursor = resumeCursor(headers?.["last-event-id"], query.afterActivityCursor, "afterActivityCursor");
      if (cursor === undefined) throw validationFailure("Invalid request: afterActivityCursor is required");
      return { status: 200, stream: await streams.watchSession(path.server, path.sessionId, cursor, context.signal) };
    },
    watchServer: async ({ path, query, headers }, context) => ({
      status: 200,
      stream: await streams.watchServer(path.server, resumeCursor(headers?.["last-event-id"], query?.afterServerCursor, "afterServerCursor"), context.signal),
    }),
  };
}

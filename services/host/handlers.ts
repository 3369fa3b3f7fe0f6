// Binds the contract's handlers to the core services. Each handler takes the
// validated input and returns the declared status and body; typed failures
// thrown by services are encoded by the HTTP edge.
import type { Handlers } from "../../generated/server/routes.js";
import type { SessionService } from "../core/sessions.js";
import { PROTOCOL_VERSION, type RequestContext } from "../http/handler.js";

export interface HandlerServices {
  readonly sessions: SessionService;
  readonly release: string;
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
  | "promoteSessionBackground"
  | "listSavedPermissions"
  | "removeSavedPermission"
>;

export function sessionHandlers({ sessions, release }: HandlerServices): Implemented {
  return {
    health: async () => ({ status: 200, body: { status: "ok" } }),
    capabilities: async () => ({
      status: 200,
      body: { backgroundSubagents: false, protocolVersion: PROTOCOL_VERSION, harnessVersion: release },
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
    // No sub-agent chains run on this host yet, so there is never one to detach.
    promoteSessionBackground: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: { promoted: false } };
    },
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

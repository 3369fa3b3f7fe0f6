// Binds the workspace history operations to core: history pages and source reads, the history
// watch, Session and server search, and the interactions a reconnecting client answers.
import type { Handlers } from "../../generated/server/routes.js";
import { DiagnosticsService } from "../core/diagnostics/service.js";
import type { ActivityHub } from "../core/events/hub.js";
import type { StreamTiming } from "../core/events/streams.js";
import { Interactions } from "../core/history/interactions.js";
import { HistoryPages } from "../core/history/pages.js";
import { ForkReceipts } from "../core/history/receipts.js";
import { HistorySearch } from "../core/history/search.js";
import { HistoryWatch, resumePosition } from "../core/history/watch.js";
import type { InteractionService } from "../core/turns/interactions.js";
import type { RequestContext } from "../http/handler.js";
import type { StorageHandle } from "../storage/index.js";

export interface WorkspaceHistoryServices {
  readonly pages: HistoryPages;
  readonly search: HistorySearch;
  readonly watch: HistoryWatch;
  readonly interactions: Interactions;
  readonly diagnostics: DiagnosticsService;
  readonly receipts: ForkReceipts;
}

export function createWorkspaceHistoryServices(storage: StorageHandle, hub: ActivityHub, replies: InteractionService, timing?: StreamTiming): WorkspaceHistoryServices {
  const interactions = new Interactions(storage, replies);
  return {
    pages: new HistoryPages(storage),
    search: new HistorySearch(storage),
    watch: new HistoryWatch(storage, hub, interactions, timing),
    interactions,
    diagnostics: new DiagnosticsService(storage, hub, timing),
    receipts: new ForkReceipts(storage),
  };
}

type WorkspaceHistoryOperations = Pick<
  Handlers<RequestContext>,
  | "history"
  | "readHistorySource"
  | "watchHistory"
  | "search"
  | "searchServer"
  | "pendingInteractions"
  | "interaction"
  | "respond"
  | "diagnostics"
  | "watchDiagnostics"
  | "context"
  | "forkReceipt"
>;

export function workspaceHistoryHandlers({ pages, search, watch, interactions, diagnostics, receipts }: WorkspaceHistoryServices): WorkspaceHistoryOperations {
  return {
    history: async ({ path, query }) => ({ status: 200, body: await pages.page(path.server, path.sessionId, query) }),
    readHistorySource: async ({ path, query }) => ({ status: 200, body: await pages.source(path.server, path.sessionId, query) }),
    watchHistory: async ({ path, query, headers }, context) => ({
      status: 200,
      stream: await watch.watch(path.server, path.sessionId, resumePosition(headers?.["last-event-id"], query), context.signal),
    }),
    search: async ({ path, query }) => ({ status: 200, body: await search.search(path.server, path.sessionId, query) }),
    searchServer: async ({ path, query }) => ({ status: 200, body: await search.searchServer(path.server, query) }),
    pendingInteractions: async ({ path }) => ({ status: 200, body: await interactions.pending(path.server, path.sessionId) }),
    interaction: async ({ path }) => ({ status: 200, body: { interaction: await interactions.get(path.server, path.sessionId, path.requestId) } }),
    respond: async ({ path, body }) => ({ status: 200, body: await interactions.respond(path.server, path.sessionId, path.requestId, body) }),
    diagnostics: async ({ path, query }) => ({ status: 200, body: await diagnostics.page(path.server, path.sessionId, query) }),
    watchDiagnostics: async ({ path }, context) => ({ status: 200, stream: await diagnostics.watch(path.server, path.sessionId, context.signal) }),
    context: async ({ path, query }) => ({ status: 200, body: await diagnostics.context(path.server, path.sessionId, query?.through) }),
    forkReceipt: async ({ path }) => ({ status: 200, body: await receipts.get(path.server, path.sessionId, path.forkedSessionId) }),
  };
}

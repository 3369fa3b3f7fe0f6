// Binds the contract's history operations to core: conversation entries, forks, the plugin
// journal and context compactions. Typed failures thrown by the services are encoded by the
// HTTP edge.
import type { Handlers } from "../../generated/server/routes.js";
import type { Config } from "../config/index.js";
import { CompactionService } from "../core/compaction/service.js";
import type { ActivityHub } from "../core/events/hub.js";
import { ConversationService } from "../core/history/conversation.js";
import { ForkService } from "../core/history/fork.js";
import { JournalService } from "../core/history/journal.js";
import type { ModelAvailability } from "../core/turns/service.js";
import type { RequestContext } from "../http/handler.js";
import type { StorageHandle } from "../storage/index.js";

export interface HistoryHandlerServices {
  readonly conversation: ConversationService;
  readonly forks: ForkService;
  readonly journal: JournalService;
  readonly compactions: CompactionService;
}

/** The history services of one host; `runner` (when this host runs work) runs admitted compactions. */
export function createHistoryServices(
  storage: StorageHandle,
  hub: ActivityHub,
  config: Config,
  models: ModelAvailability,
  runner: { adopt(sessionId: string): void } | undefined,
): HistoryHandlerServices {
  return {
    conversation: new ConversationService({ storage }),
    forks: new ForkService({ storage, hub }),
    journal: new JournalService(storage),
    compactions: new CompactionService({ storage, config, hub, models, runner }),
  };
}

type HistoryOperations = Pick<
  Handlers<RequestContext>,
  "appendConversation" | "forkSession" | "listPluginJournal" | "listSessionCompactions" | "getContextCompaction" | "submitContextCompaction" | "cancelContextCompaction"
>;

export function historyHandlers({ conversation, forks, journal, compactions }: HistoryHandlerServices): HistoryOperations {
  return {
    appendConversation: async ({ path, headers, body }) => ({
      status: 200,
      body: { receipt: await conversation.append(path.server, path.sessionId, headers["x-ze-harness-client-id"], body) },
    }),
    forkSession: async ({ path, body }) => ({
      status: 200,
      body: { session: await forks.fork(path.server, path.sessionId, path.forkedSessionId, body) },
    }),
    listPluginJournal: async ({ path, query }) => ({ status: 200, body: await journal.list(path.server, path.sessionId, query) }),
    listSessionCompactions: async ({ path, query }) => ({ status: 200, body: await compactions.list(path.server, path.sessionId, query) }),
    getContextCompaction: async ({ path }) => ({
      status: 200,
      body: { compaction: await compactions.get(path.server, path.sessionId, path.compactionId) },
    }),
    submitContextCompaction: async ({ path, headers, body }) => ({
      status: 202,
      body: { receipt: await compactions.submit(path.server, path.sessionId, headers["x-ze-harness-client-id"], body) },
    }),
    cancelContextCompaction: async ({ path, body }) => ({
      status: 200,
      body: { compaction: await compactions.cancel(path.server, path.sessionId, path.compactionId, body?.reason) },
    }),
  };
}

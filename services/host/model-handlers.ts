// Binds the contract's model catalog operations to the host catalog (model-catalog.ts): the
// runtime snapshot (`models`), a Session's adopted snapshot (`sessionModels`), the single-shot
// revision streams (`modelEvents`, `sessionModelEvents`: one `models.revision` event with the
// present `hostRevision`, then the stream closes) and `refreshProviderModels`.
import type { Handlers, SseMessage } from "../../generated/server/routes.js";
import type { ModelRevisionEvent } from "../../generated/client/types.gen.js";
import type { SessionService } from "../core/sessions.js";
import type { RequestContext } from "../http/handler.js";
import type { HostModelCatalog } from "./model-catalog.js";

type ModelOperations = Pick<Handlers<RequestContext>, "models" | "sessionModels" | "modelEvents" | "sessionModelEvents" | "refreshProviderModels">;

async function* once(hostRevision: string): AsyncGenerator<SseMessage<ModelRevisionEvent>> {
  yield { event: "models.revision", data: { type: "models.revision", hostRevision } };
}

export function modelHandlers({ catalog, sessions }: { readonly catalog: HostModelCatalog; readonly sessions: SessionService }): ModelOperations {
  return {
    models: async () => ({ status: 200, body: await catalog.snapshot() }),
    sessionModels: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: await catalog.sessionSnapshot(path.sessionId) };
    },
    modelEvents: async () => ({ status: 200, stream: once((await catalog.snapshot()).hostRevision) }),
    sessionModelEvents: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, stream: once((await catalog.sessionSnapshot(path.sessionId)).hostRevision) };
    },
    refreshProviderModels: async ({ body }) => ({ status: 200, body: await catalog.refresh(body.providerId) }),
  };
}

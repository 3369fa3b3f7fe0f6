// Binds the contract's plugin operations to the host's plugin services: the runtime plugin
// inventory and reload (`plugins`, `reload`) and a Session's plugin overlay (`sessionPlugins`,
// `addSessionPlugin`, `removeSessionPlugin`, `reloadSessionPlugin`, `refreshSessionPlugin`).
// The services load on first use (see plugin-host.ts). Typed failures thrown by the services are
// encoded by the HTTP edge.
import type { RuntimePlugin } from "../../generated/client/types.gen.js";
import type { Handlers } from "../../generated/server/routes.js";
import type { RequestContext } from "../http/handler.js";
import type { Config } from "../config/index.js";
import type { PluginHandlerServices } from "./plugin-handlers.js";

type PluginOperations = Pick<
  Handlers<RequestContext>,
  "plugins" | "reload" | "sessionPlugins" | "addSessionPlugin" | "removeSessionPlugin" | "reloadSessionPlugin" | "refreshSessionPlugin"
>;

export function pluginHandlers({
  services,
  inventory,
  models,
}: {
  readonly services: () => Promise<PluginHandlerServices>;
  /** The runtime inventory without waiting on a plugin still activating (default: the loaded runtime's). */
  readonly inventory?: () => Promise<RuntimePlugin[]>;
  /** The model catalog, re-resolved (catalog data read again, discovery repeated) beside the plugin reload. */
  readonly models?: { reload(config?: Config): Promise<string | undefined> };
}): PluginOperations {
  return {
    plugins: async () => ({ status: 200, body: { plugins: inventory ? await inventory() : (await services()).runtime.plugins() } }),
    reload: async () => {
      const loaded = await services();
      const result = await loaded.runtime.reload();
      // The model catalog recompiles the `providers` map of the configuration the reload read.
      await models?.reload(loaded.config?.());
      return { status: 200, body: result };
    },
    sessionPlugins: async ({ path }) => ({ status: 200, body: { status: await (await services()).sessions.status(path.server, path.sessionId) } }),
    addSessionPlugin: async ({ path, body }) => ({ status: 200, body: { status: await (await services()).sessions.add(path.server, path.sessionId, body) } }),
    removeSessionPlugin: async ({ path }) => ({ status: 200, body: { status: await (await services()).sessions.remove(path.server, path.sessionId) } }),
    reloadSessionPlugin: async ({ path }) => ({ status: 200, body: { status: await (await services()).sessions.reload(path.server, path.sessionId) } }),
    refreshSessionPlugin: async ({ path, body }) => ({ status: 200, body: { status: await (await services()).sessions.refresh(path.server, path.sessionId, body) } }),
  };
}

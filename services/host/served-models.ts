// Plugin models on the Node host: which served models (services/providers/served.ts) a request
// may name — the host plugin generation's (the runtime catalog, admission) or, for a running
// Turn, the host generation and Session overlay it leased (runner-host.ts pins them) — and the
// siblings they run beside: the available composed models of the catalog the call uses.
// The plugin room (services/plugins/models.ts) loads only once plugins are loaded.
import type { CatalogModel } from "../../generated/client/types.gen.js";
import type { Env } from "../config/index.js";
import type { PluginGeneration } from "../plugins/generation.js";
import { catalogSnapshot, loadCredentialSources, servedModel, type ProviderSet, type ServedModel } from "../providers/index.js";
import type { HostPlugins } from "./plugin-host.js";

type ModelsModule = typeof import("../plugins/models.js");

export class HostServedModels {
  private plugins: (() => HostPlugins | undefined) | undefined;
  private scopeOf: ((workdir: string) => Promise<{ readonly plugins: HostPlugins; readonly config: { readonly plugins?: readonly unknown[] | undefined } }>) | undefined;
  private module: ModelsModule | undefined;
  private readonly pins = new Map<string, { models: readonly ServedModel[]; count: number }>();

  /** The host scope's plugins, and the scope of a Session's workdir (set once the scopes exist). */
  attach(plugins: () => HostPlugins | undefined, scopeOf?: HostServedModels["scopeOf"]): void {
    this.plugins = plugins;
    this.scopeOf = scopeOf;
  }

  /** Loads the plugin room's model module when plugins are loaded (so `runtime()` can read them). */
  async ready(): Promise<void> {
    if (this.module === undefined && this.plugins?.()?.loaded() !== undefined) this.module = await import("../plugins/models.js");
  }

  /** The host generation's models (empty while plugins are not loaded). */
  runtime(): readonly ServedModel[] {
    const generation = this.plugins?.()?.loaded()?.runtime.current;
    return generation !== undefined && this.module !== undefined ? this.module.servedModelsOf(generation) : [];
  }

  /** The models `sessionId`'s running Turn leased, else the runtime's. */
  current(sessionId?: string): readonly ServedModel[] {
    return (sessionId !== undefined ? this.pins.get(sessionId)?.models : undefined) ?? this.runtime();
  }

  find(ref: string, sessionId?: string): ServedModel | undefined {
    return servedModel(this.current(sessionId), ref);
  }

  /**
   * The models a Turn of `sessionId` (in `workdir`) would lease: its project scope's generation's
   * and its Session overlay's (an overlay activates on this first use, as a Turn would activate it).
   */
  async forSession(sessionId: string, workdir?: string): Promise<readonly ServedModel[]> {
    // The Session's project scope (the host's unless its workdir has another project file); a
    // project's configured plugins activate here when its first Turn is admitted.
    const scope = workdir !== undefined ? await this.scopeOf?.(workdir) : undefined;
    const plugins = scope?.plugins ?? this.plugins?.();
    let services = plugins?.loaded();
    if (services === undefined && plugins !== undefined && (plugins.activating() || (scope?.config.plugins?.length ?? 0) > 0)) services = await plugins.get();
    if (services === undefined) return this.runtime();
    this.module ??= await import("../plugins/models.js");
    const lease = await services.sessions.lease(sessionId);
    try {
      return [...this.module.servedModelsOf(lease.host), ...this.module.servedModelsOf(lease.session)];
    } finally {
      lease.release();
    }
  }

  /** Pins a Turn's generations' models for its Session; the returned function ends the pin. */
  async pin(sessionId: string, generations: readonly (PluginGeneration | undefined)[]): Promise<() => void> {
    this.module ??= await import("../plugins/models.js");
    const models = generations.flatMap((generation) => [...this.module!.servedModelsOf(generation)]);
    if (models.length === 0) return () => {};
    const pin = this.pins.get(sessionId) ?? { models, count: 0 };
    pin.count += 1;
    this.pins.set(sessionId, pin);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      pin.count -= 1;
      if (pin.count === 0 && this.pins.get(sessionId) === pin) this.pins.delete(sessionId);
    };
  }
}

/** The available composed models of `set` (credentials read now), sorted by ref. */
export async function siblingModels(set: ProviderSet, env: Env): Promise<CatalogModel[]> {
  return catalogSnapshot(set, await loadCredentialSources(env)).models.filter((model) => model.availability.status === "available");
}

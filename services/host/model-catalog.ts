// The host's model catalog: the current catalog generation (the catalog data — the fetched cache
// when it supersedes the bundle, else the bundle — compiled with the config's `providers` map and
// what each discovery provider's `GET <baseURL>/models` listed), the snapshots the contract serves,
// and the generation each running Turn leased.
//
// - `snapshot()` is the runtime snapshot; its `hostRevision` is a hash of its content, and
//   availability is read from `auth.json` on every call, so a key connected by any process (this
//   host's connection operations or another CLI) publishes a new revision without a signal.
// - A Turn leases the generation and snapshot current at its start (`pin`): its model requests
//   and limits use that generation, and its Session's adopted snapshot (`sessionSnapshot`) stays
//   the one it started with until it settles — a reload or refresh never changes an active
//   Turn's catalog. An idle Session adopts the runtime snapshot.
// - `reload(config)` reads the catalog data again, recompiles the reloaded configuration's
//   `providers` map and repeats discovery (a new generation; a failure keeps the previous one
//   and its configuration). `refresh()` revalidates the cached catalog (taking effect on reload)
//   and re-runs discovery now (taking effect at once).
// - Discovery runs on first need (or at startup for a server); its failures are warnings.
import type { CatalogSnapshot, ProviderModelRefreshOutcome, RefreshProviderModelsResponse } from "../../generated/client/types.gen.js";
import type { Config, Env } from "../config/index.js";
import { notFound } from "../contract/failure.js";
import type { HostServedModels } from "./served-models.js";
import {
  bundledCatalog,
  catalogSnapshot,
  describeProviderError,
  discoverProviderModels,
  discovers,
  loadCatalog,
  loadCredentialSources,
  modelsFetchDisabled,
  parseModelRef,
  refreshCatalogCache,
  resolveProviders,
  type DiscoveredModel,
  type NormalizedCatalog,
  type ProviderSet,
  type ProviderSetupError,
} from "../providers/index.js";

/** Background refreshes of the cached catalog while a server runs (the reference: hourly). */
export const CATALOG_REFRESH_INTERVAL_MS = 60 * 60 * 1000;

interface Generation {
  readonly set: ProviderSet;
  readonly catalog: NormalizedCatalog;
  readonly discovered: Readonly<Record<string, readonly DiscoveredModel[]>>;
}

export interface HostModelCatalogOptions {
  readonly config: Config;
  readonly env: Env;
  readonly warn?: ((message: string) => void) | undefined;
  /** The fetch used for discovery and catalog refreshes (tests: the global one is fine). */
  readonly fetch?: typeof fetch;
  /** Native provider definitions by configured provider ID (the SDK's `providerDefinitions`). */
  readonly definitions?: Readonly<Record<string, unknown>> | undefined;
  /** Plugin models, listed beside the composed ones (served-models.ts). */
  readonly served?: HostServedModels;
}

/** Thrown at startup for an unusable `providers` map (the host names it as a setup error). */
export class CatalogSetupError extends Error {
  constructor(readonly error: ProviderSetupError) {
    super(error.message);
  }
}

type Providers = Parameters<typeof resolveProviders>[0];

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export class HostModelCatalog {
  private generation: Generation;
  private discovering: Promise<void> | undefined;
  private readonly pins = new Map<string, { readonly generation: Generation; readonly snapshot: () => CatalogSnapshot; count: number }>();
  private readonly closing = new AbortController();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The configuration the current generation was compiled from (a reload may bring a newer one). */
  private config: Config;

  private constructor(
    private readonly options: HostModelCatalogOptions,
    initial: Generation,
  ) {
    this.generation = initial;
    this.config = options.config;
  }

  /** Loads the catalog data and compiles the providers (without discovery, which runs on first need). */
  static async create(options: HostModelCatalogOptions): Promise<HostModelCatalog> {
    const loaded = await loadCatalog(options.env);
    const providers = options.config.providers as Providers;
    let resolved = resolveProviders(providers, { catalog: loaded.catalog, env: options.env, definitions: options.definitions });
    let catalog = loaded.catalog;
    if (!resolved.ok && loaded.origin === "cache") {
      // The bundle is the floor: a cached catalog the config cannot compile against is not used.
      const bundled = resolveProviders(providers, { env: options.env, definitions: options.definitions });
      if (bundled.ok) {
        options.warn?.(`the cached model catalog could not be used (${describeProviderError(resolved.error)}); using the bundled catalog`);
        resolved = bundled;
        catalog = bundledCatalog();
      }
    }
    if (!resolved.ok) throw new CatalogSetupError(resolved.error);
    return new HostModelCatalog(options, { set: resolved.value, catalog, discovered: {} });
  }

  /** The current generation's providers (or the one `sessionId`'s running Turn leased). */
  providers(sessionId?: string): ProviderSet {
    const pinned = sessionId !== undefined ? this.pins.get(sessionId) : undefined;
    return (pinned?.generation ?? this.generation).set;
  }

  /** Resolves once startup discovery has run (at most once per generation; never rejects). */
  ready(): Promise<void> {
    this.discovering ??= this.discoverAll(this.generation).then((next) => {
      if (next !== undefined) this.generation = next;
    });
    return this.discovering;
  }

  private async discover(generation: Generation, only?: string): Promise<{ discovered: Record<string, readonly DiscoveredModel[]>; outcomes: Map<string, ProviderModelRefreshOutcome> }> {
    const discovered: Record<string, readonly DiscoveredModel[]> = { ...generation.discovered };
    const outcomes = new Map<string, ProviderModelRefreshOutcome>();
    const targets = generation.set.providers.filter((provider) => discovers(provider) && (only === undefined || provider.id === only));
    if (targets.length === 0) return { discovered, outcomes };
    const sources = await loadCredentialSources(this.options.env);
    await Promise.all(
      targets.map(async (provider) => {
        const result = await discoverProviderModels(provider, sources, {
          signal: this.closing.signal,
          ...(this.options.fetch !== undefined ? { fetch: this.options.fetch } : {}),
        });
        if (!result.ok) {
          // Expected failures keep the catalog and configured models (and what an earlier discovery found).
          this.options.warn?.(result.message);
          outcomes.set(provider.id, { providerId: provider.id, status: "failed", message: result.message });
          return;
        }
        const before = generation.discovered[provider.id];
        discovered[provider.id] = result.models;
        outcomes.set(provider.id, { providerId: provider.id, status: sameJson(before ?? [], result.models) ? "unchanged" : "updated" });
      }),
    );
    return { discovered, outcomes };
  }

  /** `generation` with discovery repeated; undefined when nothing discovers or the result does not compile. */
  private async discoverAll(generation: Generation): Promise<Generation | undefined> {
    const { discovered, outcomes } = await this.discover(generation);
    if (outcomes.size === 0) return undefined;
    return this.compile(generation.catalog, discovered);
  }

  private compile(catalog: NormalizedCatalog, discovered: Record<string, readonly DiscoveredModel[]>, config: Config = this.config): Generation | undefined {
    const resolved = resolveProviders(config.providers as Providers, { catalog, discovered, env: this.options.env, definitions: this.options.definitions });
    if (!resolved.ok) {
      this.options.warn?.(`the model catalog could not be compiled: ${describeProviderError(resolved.error)}`);
      return undefined;
    }
    return { set: resolved.value, catalog, discovered };
  }

  private async snapshotOf(generation: Generation): Promise<CatalogSnapshot> {
    await this.options.served?.ready();
    return this.snapshotFrom(generation, await loadCredentialSources(this.options.env));
  }

  /** `sessionId`: the Session whose running Turn's plugin models are listed (else the runtime's). */
  private snapshotFrom(generation: Generation, sources: Awaited<ReturnType<typeof loadCredentialSources>>, sessionId?: string): CatalogSnapshot {
    const defaultModel = this.config.model;
    const served = this.options.served?.current(sessionId) ?? [];
    return catalogSnapshot(generation.set, sources, { ...(defaultModel !== undefined ? { defaultModel } : {}), served });
  }

  /** The host's default model: the configured one when available, else the first available ref. */
  async defaultModel(): Promise<string | undefined> {
    return (await this.snapshot()).defaultModel;
  }

  /** The runtime snapshot (after startup discovery). */
  async snapshot(): Promise<CatalogSnapshot> {
    await this.ready();
    return this.snapshotOf(this.generation);
  }

  /** The snapshot `sessionId` adopted: its running Turn's, else the runtime snapshot. */
  async sessionSnapshot(sessionId: string): Promise<CatalogSnapshot> {
    return this.pins.get(sessionId)?.snapshot() ?? this.snapshot();
  }

  /** Leases the current generation for a Turn of `sessionId`; the returned function ends the lease. */
  async pin(sessionId: string): Promise<() => void> {
    await this.ready();
    let pin = this.pins.get(sessionId);
    if (pin === undefined) {
      const generation = this.generation;
      // Availability as of the Turn's start (auth.json read now); the snapshot itself is built
      // only when someone asks for the Session's models while the Turn runs.
      const sources = await loadCredentialSources(this.options.env);
      let built: CatalogSnapshot | undefined;
      pin = { generation, snapshot: () => (built ??= this.snapshotFrom(generation, sources, sessionId)), count: 0 };
      // A concurrent pin of the same Session may have finished first: share it.
      pin = this.pins.get(sessionId) ?? pin;
      this.pins.set(sessionId, pin);
    }
    pin.count += 1;
    const held = pin;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.count -= 1;
      if (held.count === 0 && this.pins.get(sessionId) === held) this.pins.delete(sessionId);
    };
  }

  /**
   * Before a Turn names `model`: when the catalog lacks it and its provider discovers, list the
   * provider's models again (a model added upstream since startup becomes usable without a reload).
   */
  async ensure(model: string): Promise<void> {
    await this.ready();
    if (this.generation.set.model(model) !== undefined) return;
    const providerId = parseModelRef(model)?.providerId;
    const provider = providerId !== undefined ? this.generation.set.provider(providerId) : undefined;
    if (provider === undefined || !discovers(provider)) return;
    await this.rediscover(provider.id);
  }

  private async rediscover(only?: string): Promise<Map<string, ProviderModelRefreshOutcome>> {
    const generation = this.generation;
    const { discovered, outcomes } = await this.discover(generation, only);
    if ([...outcomes.values()].some((outcome) => outcome.status === "updated")) {
      const next = this.compile(generation.catalog, discovered);
      // A reload that finished meanwhile wins: apply only onto the generation discovery started from.
      if (next !== undefined && this.generation === generation) this.generation = next;
    }
    return outcomes;
  }

  /**
   * A runtime reload: the catalog data read again, the providers compiled from `config` (the
   * configuration the reload read; the current one when absent) and discovery repeated. Returns
   * an error message when the previous generation — and its configuration — stays.
   */
  async reload(config: Config = this.config): Promise<string | undefined> {
    await this.ready();
    const loaded = await loadCatalog(this.options.env);
    // The bundle is the floor: a cached catalog the config cannot compile against is not used.
    const base = this.compile(loaded.catalog, {}, config) ?? (loaded.origin === "cache" ? this.compile(bundledCatalog(), {}, config) : undefined);
    if (base === undefined) return "the model catalog could not be compiled; the previous catalog stays";
    this.config = config;
    const discovered = await this.discoverAll(base);
    // A reload that finished meanwhile wins.
    if (this.config !== config) return undefined;
    this.generation = discovered ?? base;
    return undefined;
  }

  /**
   * `refreshProviderModels`: revalidates the cached catalog (a provider whose catalog data the
   * next reload would change is `updated`; the change takes effect on reload) and re-runs
   * discovery (effective at once) — for `providerId`, or every provider.
   */
  async refresh(providerId?: string): Promise<RefreshProviderModelsResponse> {
    await this.ready();
    const generation = this.generation;
    if (providerId !== undefined && generation.set.provider(providerId) === undefined) {
      throw notFound("provider", `Provider ${providerId} is not configured`);
    }
    const targets = generation.set.providers.filter((provider) => providerId === undefined || provider.id === providerId);
    const catalogIdOf = (id: string): string | undefined => {
      const provider = generation.set.provider(id);
      const catalogId = provider?.base ?? id;
      return Object.hasOwn(generation.catalog.providers, catalogId) ? catalogId : undefined;
    };
    const outcomes = new Map<string, ProviderModelRefreshOutcome>();
    const catalogBacked = targets.filter((provider) => catalogIdOf(provider.id) !== undefined);
    if (catalogBacked.length > 0) {
      const refreshed = await refreshCatalogCache(this.options.env, this.options.fetch !== undefined ? { fetch: this.options.fetch } : {});
      if (refreshed.status === "failed") this.options.warn?.(refreshed.message ?? "catalog refresh failed");
      const next = refreshed.status === "failed" ? undefined : (await loadCatalog(this.options.env)).catalog;
      for (const provider of catalogBacked) {
        if (next === undefined) {
          outcomes.set(provider.id, { providerId: provider.id, status: "failed", ...(refreshed.message !== undefined ? { message: refreshed.message } : {}) });
          continue;
        }
        const id = catalogIdOf(provider.id)!;
        const changed = !sameJson(generation.catalog.providers[id], Object.hasOwn(next.providers, id) ? next.providers[id] : undefined);
        outcomes.set(
          provider.id,
          changed ? { providerId: provider.id, status: "updated", message: "refreshed catalog data takes effect on runtime reload" } : { providerId: provider.id, status: "unchanged" },
        );
      }
    }
    if (targets.some(discovers)) {
      for (const [id, outcome] of await this.rediscover(providerId)) {
        const earlier = outcomes.get(id);
        if (earlier === undefined || rank(outcome) > rank(earlier)) outcomes.set(id, earlier?.message !== undefined && outcome.message === undefined ? { ...outcome, message: earlier.message } : outcome);
      }
    }
    for (const provider of targets) if (!outcomes.has(provider.id)) outcomes.set(provider.id, { providerId: provider.id, status: "unchanged" });
    return {
      providers: [...outcomes.values()].sort((a, b) => (a.providerId < b.providerId ? -1 : a.providerId > b.providerId ? 1 : 0)),
      snapshot: await this.snapshotOf(this.generation),
    };
  }

  /** A server's background refreshes: discovery now, and the cached catalog at startup and hourly (unless `ZE_HARNESS_DISABLE_MODELS_FETCH=1`). */
  startBackground(): void {
    void this.ready();
    if (modelsFetchDisabled(this.options.env) || this.timer !== undefined) return;
    const run = (): void => {
      void refreshCatalogCache(this.options.env, this.options.fetch !== undefined ? { fetch: this.options.fetch } : {}).then((result) => {
        if (result.status === "failed") this.options.warn?.(result.message ?? "catalog refresh failed");
      });
    };
    run();
    this.timer = setInterval(run, CATALOG_REFRESH_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.closing.abort();
  }
}

const rank = (outcome: ProviderModelRefreshOutcome): number => (outcome.status === "failed" ? 2 : outcome.status === "updated" ? 1 : 0);

// The host's plugin runtime: the current host generation, swapped for a new one on reload, and
// leased by running Turns. A reload re-reads its source (configuration), activates a complete new
// generation beside the current one, and swaps only when it activated (`reloaded`); otherwise the
// current one stays (`rejected`). A Turn leases the generation it starts with and keeps it until
// it releases, so a swap never changes a running Turn's tools, hooks or agents; a replaced
// generation closes (its plugins' cleanups run) once its last lease is released.
import type { RuntimePlugin, RuntimeReloadResponse } from "../../generated/client/types.gen.js";
import type { AgentCatalogResult, PluginAgentLayer } from "../workspace/agents.js";
import type { PluginCandidate } from "./activate.js";
import { loadPluginGeneration, type LoadPluginGenerationOptions, type PluginGeneration } from "./generation.js";

/** What one (re)load activates: the candidates and what their generation is checked against. */
export type RuntimeSource =
  | {
      readonly ok: true;
      readonly candidates: readonly PluginCandidate[];
      /** The Agent catalog with the generation's layer (built from the same configuration read). */
      readonly agentCatalog?: ((layer: PluginAgentLayer) => AgentCatalogResult) | undefined;
      readonly reservedMcp?: LoadPluginGenerationOptions["reservedMcp"];
      /** Names what was loaded (e.g. a digest of a host's plugin list): the generation id is `host-<n>-<revision>`. */
      readonly revision?: string | undefined;
    }
  | { readonly ok: false; readonly message: string };

export interface PluginRuntimeOptions extends Omit<LoadPluginGenerationOptions, "activation" | "candidates" | "base" | "agentCatalog" | "reservedMcp"> {
  /** Read at start and on every reload (configuration is read again). */
  readonly source: () => RuntimeSource | Promise<RuntimeSource>;
}

/** A Turn's hold on a generation. `release()` is idempotent. */
export interface GenerationLease {
  readonly generation: PluginGeneration;
  release(): void;
}

/** Why the last reload (or the start) did not activate. */
export interface PluginRejection {
  readonly message: string;
  readonly plugins: readonly RuntimePlugin[];
}

export type PluginRuntimeStart = { readonly ok: true; readonly runtime: PluginRuntime } | ({ readonly ok: false } & PluginRejection);

/** Hears the inventory while the first generation activates: every plugin, none of them in use yet (`failed`, saying where it stands). */
export type PluginProgress = (plugins: readonly RuntimePlugin[]) => void;

/** The error texts of plugins of a generation that is still activating. */
export const PENDING_MESSAGES = {
  current: "Still activating: its module or setup has not finished.",
  waiting: "Waiting: a plugin before it is still activating.",
  activated: "Activated; not in use until every plugin before and after it has activated.",
} as const;

export class PluginRuntime {
  private generation: PluginGeneration;
  private version: number;
  private readonly leases = new Map<PluginGeneration, number>();
  private readonly retired = new Set<PluginGeneration>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private rejection: PluginRejection | undefined;
  /** A first generation that did not activate (see {@link startWithout}), until a reload activates one. */
  private startRejection: PluginRejection | undefined;

  private constructor(
    private readonly options: PluginRuntimeOptions,
    first: PluginGeneration,
    version: number,
  ) {
    this.generation = first;
    this.version = version;
  }

  /** Loads the first generation (`host-1`); a rejected one is returned as the reason (the host should not start). */
  static async start(options: PluginRuntimeOptions, onProgress?: PluginProgress): Promise<PluginRuntimeStart> {
    const loaded = await load(options, 1, onProgress);
    if (!loaded.ok) return { ok: false, message: loaded.message, plugins: loaded.plugins };
    return { ok: true, runtime: new PluginRuntime(options, loaded.generation, 1) };
  }

  /**
   * Like {@link start}, for a host that already serves: a first generation that does not activate
   * leaves the runtime with an empty one (no plugins) and returns the rejection, which
   * {@link plugins} lists until a reload activates a generation.
   */
  static async startWithout(options: PluginRuntimeOptions, onProgress?: PluginProgress): Promise<{ readonly runtime: PluginRuntime; readonly rejection?: PluginRejection }> {
    const started = await PluginRuntime.start(options, onProgress);
    if (started.ok) return { runtime: started.runtime };
    const { source: _source, ...rest } = options;
    const empty = await loadPluginGeneration({ ...rest, activation: { scope: "host", revision: { id: "host-1", version: 1 } }, candidates: [] });
    // No candidates, no Agent catalog check: an empty generation always activates.
    if (!empty.ok) throw new Error(empty.message);
    const runtime = new PluginRuntime(options, empty.generation, 1);
    const rejection = { message: started.message, plugins: started.plugins };
    runtime.startRejection = rejection;
    return { runtime, rejection };
  }

  /** The generation new Turns get. */
  get current(): PluginGeneration {
    return this.generation;
  }

  /** The current generation's plugin statuses (`GET /v1/runtime/plugins`). */
  plugins(): RuntimePlugin[] {
    return [...(this.startRejection?.plugins ?? this.generation.plugins)];
  }

  /** The last reload's rejection, until a reload succeeds. */
  get lastRejection(): PluginRejection | undefined {
    return this.rejection;
  }

  /** Holds the current generation until `release()` (a Turn leases at its start, releases at its end). */
  lease(): GenerationLease {
    if (this.closed) throw new Error("The plugin runtime is closed");
    const generation = this.generation;
    this.leases.set(generation, (this.leases.get(generation) ?? 0) + 1);
    let released = false;
    return {
      generation,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.leases.get(generation) ?? 1) - 1;
        if (left > 0) this.leases.set(generation, left);
        else {
          this.leases.delete(generation);
          if (this.retired.has(generation)) this.retire(generation);
        }
      },
    };
  }

  /** How many leases hold `generation`. */
  leaseCount(generation: PluginGeneration): number {
    return this.leases.get(generation) ?? 0;
  }

  /**
   * Re-reads the source and activates a new generation (`POST /v1/runtime/reload`). Reloads run
   * one at a time. `rejected` keeps the current generation; its `plugins` are the current
   * inventory followed by the rejected revision's failed entries (their own `generationId`).
   */
  reload(): Promise<RuntimeReloadResponse> {
    const run = async (): Promise<RuntimeReloadResponse> => {
      if (this.closed) throw new Error("The plugin runtime is closed");
      const version = ++this.version;
      const loaded = await load(this.options, version);
      if (!loaded.ok) {
        this.rejection = { message: loaded.message, plugins: loaded.plugins };
        return { result: "rejected", plugins: [...this.generation.plugins, ...loaded.plugins.filter((plugin) => plugin.status === "failed")] };
      }
      if (this.closed) {
        await loaded.generation.close();
        throw new Error("The plugin runtime is closed");
      }
      const previous = this.generation;
      this.generation = loaded.generation;
      this.rejection = undefined;
      this.startRejection = undefined;
      this.retired.add(previous);
      if (this.leaseCount(previous) === 0) this.retire(previous);
      return { result: "reloaded", plugins: [...loaded.generation.plugins] };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Retires the current generation; generations still leased close when released. Resolves once the unleased ones closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    this.retired.add(this.generation);
    const closing = [...this.retired].filter((generation) => this.leaseCount(generation) === 0).map((generation) => this.retire(generation));
    await Promise.all(closing);
  }

  private retire(generation: PluginGeneration): Promise<void> {
    this.retired.delete(generation);
    return generation.close();
  }
}

async function load(options: PluginRuntimeOptions, version: number, onProgress?: PluginProgress) {
  const source = await Promise.resolve()
    .then(options.source)
    .catch((error: unknown): RuntimeSource => ({ ok: false, message: error instanceof Error ? error.message : "The plugin configuration could not be read." }));
  if (!source.ok) return { ok: false as const, message: source.message, plugins: [] as RuntimePlugin[] };
  const id = source.revision !== undefined ? `host-${version}-${source.revision}` : `host-${version}`;
  const { source: _source, ...rest } = options;
  const candidates = source.candidates;
  return loadPluginGeneration({
    ...rest,
    activation: { scope: "host", revision: { id, version } },
    candidates,
    ...(source.agentCatalog ? { agentCatalog: source.agentCatalog } : {}),
    ...(source.reservedMcp ? { reservedMcp: source.reservedMcp } : {}),
    ...(onProgress ? { onProgress: (index: number, settled: readonly RuntimePlugin[]) => onProgress(candidates.map((candidate, at) => pendingStatus(candidate, id, at, index, settled[at]))) } : {}),
  });
}

/** Candidate `at` while candidate `current` activates (`settled`: its own result, for one before it). */
function pendingStatus(candidate: PluginCandidate, generationId: string, at: number, current: number, settled: RuntimePlugin | undefined): RuntimePlugin {
  if (settled?.status === "failed") return settled;
  const error = at < current ? PENDING_MESSAGES.activated : at === current ? PENDING_MESSAGES.current : PENDING_MESSAGES.waiting;
  return { source: candidate.source, generationId, ...(settled?.pluginId !== undefined ? { pluginId: settled.pluginId } : {}), status: "failed", registrations: [], error };
}

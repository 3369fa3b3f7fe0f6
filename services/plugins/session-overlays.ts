// Longer than ~400 lines on purpose: the overlay's mutations, its lease and its activation share
// one per-Session serialization and the instance cache; split, each half would need the other's.
//
// Host-neutral: sources come through the `sources` seam (the Node host's in session-plugins.ts,
// the Worker's in worker/plugins-sources.ts), so nothing here loads a module by file path.
//
// Session plugin overlays: one plugin per Session, on top of the host generation, for that
// Session's Turns only. `add` resolves the source to an exact artifact, records an idempotent
// desired revision (same id and body: the recorded one; same id, other body: a conflict) that
// replaces the previous one, and activates it; a revision that fails to activate leaves the
// previously active one in use. `remove` clears the overlay, `reload` rebuilds the desired
// revision from its recorded artifact, `refresh` re-resolves the active revision's source and
// adopts a newer artifact when the revision did not pin one. Turns lease the host generation and
// the overlay built on it; an overlay follows a host reload on its next lease.
import { createHash, randomUUID } from "node:crypto";
import type { AddSessionPluginRequest, SessionPluginResolution, SessionPluginRevision, SessionPluginsStatus, SessionPluginSource } from "../../generated/client/types.gen.js";
import type { JsonObject, PluginContext } from "../../plugin/index.js";
import { conflict, notFound, validationFailure } from "../contract/failure.js";
import { getSession, type StorageHandle } from "../storage/index.js";
import type { AgentCatalogResult, PluginAgentLayer } from "../workspace/agents.js";
import type { PluginCandidate } from "./activate.js";
import type { HostCapabilities } from "./capabilities.js";
import { isIdentifier, isRecord, jsonProblem } from "./checks.js";
import { loadPluginGeneration, type LoadPluginGenerationOptions, type PluginGeneration } from "./generation.js";
import { HookPipeline } from "./hooks.js";
import type { JournalSink } from "./journal.js";
import type { GenerationLease, PluginRuntime } from "./runtime.js";
import { PluginSourceError } from "./source-error.js";
import * as store from "./session-store.js";
import { KeyedSerial } from "../contract/serial.js";

export interface SessionPluginOverlayOptions {
  readonly storage: StorageHandle;
  /** The host baseline every overlay extends. */
  readonly runtime: PluginRuntime;
  readonly capabilities: HostCapabilities;
  readonly journal?: JournalSink | undefined;
  readonly setupTimeoutMs?: number | undefined;
  /** The host's built-in and Core tool ids. */
  readonly reservedToolIds?: readonly string[] | undefined;
  readonly reservedMcp?: LoadPluginGenerationOptions["reservedMcp"];
  /** The Session's Agent catalog: host configuration and plugins, then this overlay's layer. */
  readonly agentCatalog?: ((host: PluginGeneration, layer: PluginAgentLayer) => AgentCatalogResult) | undefined;
  readonly nativeProviders?: ReadonlySet<string> | undefined;
  readonly onDiagnostic?: ((source: string, error: unknown) => void) | undefined;
  readonly now?: () => number;
  /** How sources resolve to artifacts and load again: the host's (session-plugins.ts for Node, worker/plugins-sources.ts). */
  readonly sources: SessionPluginSources;
}

/** Which Session a resolution or load is for (a host may account its artifacts per Session). */
export interface SessionSourceContext {
  readonly sessionId: string;
}

/** A host's Session plugin sources (the seam `SessionPluginOverlayOptions.sources`). */
export interface SessionPluginSources {
  /** Resolves a source for a new revision or a refresh; the artifact is stored (as JSON) with the revision. Typed failures: 400, 409 `declared_mismatch`, 503. */
  resolve(source: SessionPluginSource, declared: SessionPluginResolution, context?: SessionSourceContext): Promise<{ readonly resolved: { readonly pluginId: string; readonly version: string; readonly integrity?: string }; readonly artifact: object }>;
  /** Loads exactly the recorded artifact (the plugin value), or fails with a safe `PluginSourceError`. */
  load(artifact: object, context?: SessionSourceContext): Promise<{ value: unknown; packageVersion?: string }>;
  /** Frees what no recorded desired or active revision (their artifacts, given) references; returns what it freed. */
  prune?(referenced: readonly object[]): Promise<string[]>;
}

/** What a Turn holds while it runs: the host generation and the Session's overlay on it. */
export interface TurnPluginLease {
  readonly host: PluginGeneration;
  readonly session: PluginGeneration | undefined;
  /** Host hooks, then the overlay's (put an embedding host's own pipeline first with `HookPipeline.combine`). */
  readonly hooks: HookPipeline;
  release(): void;
}

/** The Session's active overlay cannot be built now (e.g. after a host reload): its next Turn fails with this. */
export class SessionPluginUnavailable extends Error {
  readonly _tag = "SessionPluginUnavailable" as const;
  readonly code = "session_plugin_unavailable" as const;
  constructor(message: string) {
    super(message);
    this.name = "SessionPluginUnavailable";
  }
}

interface Instance {
  readonly revisionId: string;
  readonly hostId: string;
  readonly generation: PluginGeneration;
  leases: number;
  retired: boolean;
}

const hashOf = (body: unknown): string => createHash("sha256").update(JSON.stringify(body)).digest("hex");

/** The resolution the client declared for a recorded revision (kept in its artifact record). */
function declaredOf(revision: store.StoredRevision): { version?: string; integrity?: string } {
  const parsed = revision.artifact ? (JSON.parse(revision.artifact) as { declared?: { version?: string; integrity?: string } }) : {};
  return parsed.declared ?? {};
}

function redacted(revision: store.StoredRevision): SessionPluginRevision {
  const resolved = revision.resolved as SessionPluginRevision["resolved"];
  const servers = revision.mcpServers as { id: string; name: string; kind: "local" | "remote"; resourceReadTool?: boolean }[];
  const skills = revision.skills as AddSessionPluginRequest["skills"];
  return {
    id: revision.id,
    sequence: revision.sequence,
    source: revision.source as SessionPluginSource,
    resolved: { pluginId: resolved.pluginId, version: resolved.version, ...(resolved.integrity !== undefined ? { integrity: resolved.integrity } : {}) },
    mcpServers: servers.map((server) => ({ serverId: server.id, name: server.name, kind: server.kind, resourceReadTool: server.resourceReadTool === true })),
    skills: skills.map((entry) =>
      entry.kind === "declaration"
        ? { kind: "declaration" as const, id: entry.declaration.id, version: entry.declaration.version }
        : { kind: "source" as const, id: entry.source.id, sourceKind: entry.source.kind },
    ),
    createdAt: revision.createdAt,
  };
}

export class SessionPluginOverlays {
  private readonly instances = new Map<string, Instance>();
  /** Mutations (and lease activations) of one Session, one at a time. */
  private readonly chains = new KeyedSerial();
  private readonly now: () => number;
  private readonly sources: SessionPluginSources;
  private mutating = 0;

  constructor(private readonly options: SessionPluginOverlayOptions) {
    this.now = options.now ?? Date.now;
    this.sources = options.sources;
  }

  /** `GET …/plugins`. */
  async status(server: string, sessionId: string): Promise<SessionPluginsStatus> {
    await this.session(server, sessionId);
    return this.describe(sessionId);
  }

  /** `PUT …/plugins`: records the desired revision (idempotently) and activates it. */
  add(server: string, sessionId: string, body: AddSessionPluginRequest): Promise<SessionPluginsStatus> {
    return this.pruning(sessionId, async () => {
      await this.session(server, sessionId);
      if (typeof body.id !== "string" || body.id.trim() === "" || body.id.length > 128) throw validationFailure("id must be a non-empty revision id of at most 128 characters.");
      if (!isIdentifier(body.resolved.pluginId)) throw validationFailure(`resolved.pluginId ${JSON.stringify(body.resolved.pluginId)} is not a plugin id.`);
      if (!isRecord(body.options) || jsonProblem(body.options) !== undefined) throw validationFailure("options must be a JSON object.");
      const requestHash = hashOf(body);
      const existing = await store.getRevision(this.options.storage, sessionId, body.id);
      if (existing) {
        if (existing.requestHash !== requestHash) throw conflict(`Session plugin revision ${body.id} was recorded with a different body.`);
        return this.describe(sessionId);
      }
      const artifact = await this.sources.resolve(body.source, body.resolved, { sessionId });
      const declared = { ...(body.resolved.version !== undefined ? { version: body.resolved.version } : {}), ...(body.resolved.integrity !== undefined ? { integrity: body.resolved.integrity } : {}) };
      await this.record(sessionId, body.id, { ...body, resolved: artifact.resolved }, artifact.artifact, requestHash, declared);
      return this.describe(sessionId);
    });
  }

  /** `DELETE …/plugins`: later Turns use the host baseline only. */
  remove(server: string, sessionId: string): Promise<SessionPluginsStatus> {
    return this.pruning(sessionId, async () => {
      await this.session(server, sessionId);
      await store.clearOverlay(this.options.storage, sessionId, this.now());
      this.retire(sessionId);
      return this.describe(sessionId);
    });
  }

  /** `POST …/plugins/reload`: rebuilds and activates the desired revision from its recorded artifact. */
  reload(server: string, sessionId: string): Promise<SessionPluginsStatus> {
    return this.serialized(sessionId, async () => {
      await this.session(server, sessionId);
      const overlay = await store.getOverlay(this.options.storage, sessionId);
      if (overlay?.desiredRevisionId) {
        if (this.instances.get(sessionId)?.revisionId === overlay.desiredRevisionId) this.retire(sessionId);
        await store.setActivation(this.options.storage, sessionId, overlay.desiredRevisionId, "pending", null, this.now());
        await this.activate(sessionId, overlay.desiredRevisionId);
      }
      return this.describe(sessionId);
    });
  }

  /** `POST …/plugins/refresh`: re-resolves the active revision `id`; a newer unpinned artifact becomes a new revision. */
  refresh(server: string, sessionId: string, body: { readonly id: string }): Promise<SessionPluginsStatus> {
    return this.pruning(sessionId, async () => {
      await this.session(server, sessionId);
      const overlay = await store.getOverlay(this.options.storage, sessionId);
      if (!overlay?.activeRevisionId || overlay.activeRevisionId !== body.id) throw conflict(`Revision ${body.id} is not the Session's active plugin revision.`);
      const active = (await store.getRevision(this.options.storage, sessionId, body.id))!;
      const recorded = active.resolved as { pluginId: string; version: string; integrity?: string };
      const declared = declaredOf(active);
      // A revision whose client declared a version or integrity is pinned: refresh keeps it.
      if (declared.version !== undefined || declared.integrity !== undefined) return this.describe(sessionId);
      const artifact = await this.sources.resolve(active.source as SessionPluginSource, { pluginId: recorded.pluginId }, { sessionId });
      if (artifact.resolved.integrity === recorded.integrity && artifact.resolved.version === recorded.version) return this.describe(sessionId);
      const next = { id: randomUUID(), source: active.source, resolved: artifact.resolved, options: active.options, mcpServers: active.mcpServers, skills: active.skills } as unknown as AddSessionPluginRequest;
      await this.record(sessionId, next.id, next, artifact.artifact, hashOf({ refreshOf: active.id, ...next }), declared);
      return this.describe(sessionId);
    });
  }

  /**
   * What a starting Turn runs with: a lease on the current host generation and the Session's
   * active overlay built on it (activating a pending desired revision first). Rejects with
   * {@link SessionPluginUnavailable} when the active revision cannot be built on this host generation.
   */
  async lease(sessionId: string): Promise<TurnPluginLease> {
    const host = this.options.runtime.lease();
    let instance: Instance | undefined;
    try {
      instance = await this.serialized(sessionId, () => this.instanceFor(sessionId, host.generation));
    } catch (error) {
      host.release();
      throw error;
    }
    if (instance) instance.leases += 1;
    let released = false;
    return {
      host: host.generation,
      session: instance?.generation,
      hooks: HookPipeline.combine(host.generation.hooks, instance?.generation.hooks),
      release: () => {
        if (released) return;
        released = true;
        host.release();
        if (instance) {
          instance.leases -= 1;
          if (instance.retired && instance.leases === 0) void instance.generation.close();
        }
      },
    };
  }

  /** Retires every overlay instance (closing the unleased ones). */
  async close(): Promise<void> {
    const closing = [...this.instances.keys()].map((sessionId) => this.retire(sessionId));
    await Promise.all(closing);
  }

  // -------------------------------------------------------------------------------------------

  private async session(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.options.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }

  private async record(
    sessionId: string,
    id: string,
    body: AddSessionPluginRequest,
    artifact: object,
    requestHash: string,
    /** The resolution the client declared (a pin refresh keeps). */
    declared: { readonly version?: string; readonly integrity?: string },
  ): Promise<void> {
    const now = this.now();
    await store.recordDesired(
      this.options.storage,
      sessionId,
      { id, source: body.source, resolved: body.resolved, options: body.options, mcpServers: body.mcpServers, skills: body.skills, artifact: JSON.stringify({ ...artifact, declared }), requestHash, createdAt: now },
      now,
    );
    await this.activate(sessionId, id);
  }

  /** Activates the desired revision `revisionId` on the current host generation and records the outcome. */
  private async activate(sessionId: string, revisionId: string): Promise<void> {
    const storage = this.options.storage;
    await store.setActivation(storage, sessionId, revisionId, "started", null, this.now());
    const host = this.options.runtime.lease();
    try {
      const built = await this.build(sessionId, revisionId, host.generation);
      if (!built.ok) {
        await store.setActivation(storage, sessionId, revisionId, "failed", built.message, this.now());
        return;
      }
      if (!(await store.setActivation(storage, sessionId, revisionId, "active", null, this.now()))) {
        await built.generation.close();
        return;
      }
      this.retire(sessionId);
      this.instances.set(sessionId, { revisionId, hostId: host.generation.id, generation: built.generation, leases: 0, retired: false });
    } finally {
      host.release();
    }
  }

  private async instanceFor(sessionId: string, host: PluginGeneration): Promise<Instance | undefined> {
    let overlay = await store.getOverlay(this.options.storage, sessionId);
    // `started` here is an activation this process did not finish (mutations of a Session are serialized): run it again.
    if (overlay?.desiredRevisionId && (overlay.activationState === "pending" || overlay.activationState === "started")) {
      await this.activate(sessionId, overlay.desiredRevisionId);
      overlay = await store.getOverlay(this.options.storage, sessionId);
    }
    const activeId = overlay?.activeRevisionId;
    if (!activeId) {
      this.retire(sessionId);
      return undefined;
    }
    const cached = this.instances.get(sessionId);
    if (cached && !cached.retired && cached.revisionId === activeId && cached.hostId === host.id) return cached;
    const built = await this.build(sessionId, activeId, host);
    if (!built.ok) throw new SessionPluginUnavailable(`The Session's plugin revision ${activeId} cannot be activated on host generation ${host.id}: ${built.message}`);
    this.retire(sessionId);
    const instance: Instance = { revisionId: activeId, hostId: host.id, generation: built.generation, leases: 0, retired: false };
    this.instances.set(sessionId, instance);
    return instance;
  }

  /** Builds revision `revisionId` as a Session-scope generation on `host`. */
  private async build(sessionId: string, revisionId: string, host: PluginGeneration) {
    const revision = await store.getRevision(this.options.storage, sessionId, revisionId);
    if (!revision) return { ok: false as const, message: `Revision ${revisionId} is not recorded.` };
    const artifact = JSON.parse(revision.artifact ?? "null") as object | null;
    const resolved = revision.resolved as { pluginId: string };
    const skills = revision.skills as AddSessionPluginRequest["skills"];
    const candidate: PluginCandidate = {
      source: describeSource(revision.source as SessionPluginSource),
      options: revision.options as JsonObject,
      load: async () => {
        if (!artifact) throw new PluginSourceError("The revision records no artifact.");
        const loaded = await this.sources.load(artifact, { sessionId });
        const plugin = loaded.value as { id?: unknown; setup?: unknown } | undefined;
        if (!isRecord(plugin) || typeof plugin.setup !== "function") return loaded;
        if (plugin.id !== resolved.pluginId) throw new PluginSourceError(`The artifact declares plugin ${JSON.stringify(plugin.id)}, not ${JSON.stringify(resolved.pluginId)}.`);
        const setup = plugin.setup as (context: PluginContext) => unknown;
        // The revision's own MCP servers and Skills register first, through the same checks.
        const wrapped = {
          id: plugin.id,
          setup: (context: PluginContext) => {
            for (const server of revision.mcpServers) context.mcp.register(server as never);
            for (const entry of skills) {
              if (entry.kind === "declaration") context.skills.register(entry.declaration as never);
              else context.skills.registerSource(entry.source as never);
            }
            return setup(context);
          },
        };
        return { ...loaded, value: wrapped };
      },
    };
    return loadPluginGeneration({
      activation: { scope: "session", sessionId, revision: { id: revision.id, version: revision.sequence } },
      candidates: [candidate],
      capabilities: this.options.capabilities,
      base: host,
      reservedToolIds: this.options.reservedToolIds,
      reservedMcp: this.options.reservedMcp,
      journal: this.options.journal,
      setupTimeoutMs: this.options.setupTimeoutMs,
      nativeProviders: this.options.nativeProviders,
      onDiagnostic: this.options.onDiagnostic,
      ...(this.options.agentCatalog ? { agentCatalog: (layer: PluginAgentLayer) => this.options.agentCatalog!(host, layer) } : {}),
    });
  }

  private retire(sessionId: string): Promise<void> {
    const instance = this.instances.get(sessionId);
    if (!instance) return Promise.resolve();
    this.instances.delete(sessionId);
    instance.retired = true;
    return instance.leases === 0 ? instance.generation.close() : Promise.resolve();
  }

  private async describe(sessionId: string): Promise<SessionPluginsStatus> {
    const storage = this.options.storage;
    const overlay = await store.getOverlay(storage, sessionId);
    const desired = overlay?.desiredRevisionId ? await store.getRevision(storage, sessionId, overlay.desiredRevisionId) : undefined;
    const active = overlay?.activeRevisionId ? await store.getRevision(storage, sessionId, overlay.activeRevisionId) : undefined;
    const instance = this.instances.get(sessionId);
    return {
      sessionId,
      ...(desired ? { desired: redacted(desired) } : {}),
      ...(desired && overlay?.activationState
        ? { desiredActivation: { revisionId: desired.id, state: overlay.activationState, ...(overlay.activationFailure !== null ? { failure: overlay.activationFailure } : {}) } }
        : {}),
      ...(active ? { active: redacted(active) } : {}),
      plugins: [...this.options.runtime.plugins(), ...(instance && active && instance.revisionId === active.id ? instance.generation.plugins : [])],
    };
  }

  /**
   * A mutation that may change which artifacts are referenced: afterwards (whether it succeeded or
   * not) the artifact cache frees every entry no desired or active revision references.
   */
  private async pruning<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    // Another Session's mutation may have installed an artifact it has not recorded yet: the
    // last mutation in flight prunes.
    this.mutating += 1;
    try {
      return await this.serialized(sessionId, fn);
    } finally {
      this.mutating -= 1;
      if (this.mutating === 0) await this.pruneArtifacts().catch((error: unknown) => this.options.onDiagnostic?.("session-plugin-artifacts", error));
    }
  }

  /** Frees the cached artifacts no recorded desired or active revision references; returns them. */
  async pruneArtifacts(): Promise<string[]> {
    if (!this.sources.prune) return [];
    const records = (await store.referencedArtifacts(this.options.storage)).map((text) => JSON.parse(text) as object);
    return this.sources.prune(records);
  }

  /** Runs mutations (and lease activations) of one Session one at a time. */
  private serialized<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    return this.chains.run(sessionId, fn);
  }
}

export type { GenerationLease };

/** How a source reads in `RuntimePlugin.source`. */
export function describeSource(source: SessionPluginSource): string {
  switch (source._tag) {
    case "Package":
      return source.requestedVersion !== undefined ? `${source.name}@${source.requestedVersion}` : source.name;
    case "File":
      return source.uri;
    case "Git":
      return source.ref !== undefined ? `${source.url}#${source.ref}` : source.url;
    case "Bundle":
      return source.url;
    case "Static":
      return `static:${source.id}`;
  }
}


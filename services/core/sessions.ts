// The Session coordinator: every Session operation of the v1 contract over the
// storage room. Mutations are committed before they are acknowledged; replaying a
// create with the same body returns the original Session, a different body is a
// conflict, and deleted identities stay retired.
import { createHash, randomUUID } from "node:crypto";
import type {
  PermissionRule,
  CreateSessionRequest,
  ReplaceSessionConfigurationRequest,
  SavedPermission,
  Session,
  SessionConfiguration,
} from "../../generated/client/types.gen.js";
import type { StorageHandle } from "../storage/index.js";
import * as store from "../storage/index.js";
import type { SessionRow, SavedPermissionRow } from "../storage/index.js";
import { resolveProjectId } from "../contract/project.js";
import { resolveWorkdir, type ResolvedWorkdir, type WorkdirRequest } from "../workspace/workdir.js";
import type { ActivityHub } from "./events/hub.js";
import { checkModelReference, checkTitle } from "./validation.js";
import { conflict, notFound } from "../contract/failure.js";
import type { AgentCatalog } from "../workspace/agents.js";
import { primaryAgent } from "./turns/agents.js";

export interface SessionServiceOptions {
  readonly storage: StorageHandle;
  /** Session workdirs resolve inside this directory. */
  readonly serverRoot: string;
  readonly now?: () => number;
  /** Announces Session changes to live watchers (the server stream). */
  readonly hub?: ActivityHub;
  /** Stops local work of deleted Sessions (their rows are gone; nothing is left to settle). */
  readonly onDeleted?: (sessionIds: readonly string[]) => void;
  /**
   * The agents of the project an absolute workdir belongs to: a Session created with an `agent`
   * must name a primary-capable one. Rejects with a typed Failure when that project's
   * configuration cannot be loaded (the Session is not created).
   */
  readonly agents?: ((workdir: string) => AgentCatalog | Promise<AgentCatalog>) | undefined;
  /**
   * How a creation request's workdir resolves and which project it belongs to: the host's
   * workspace capability. Default: directories on this machine's disk and their git identity
   * (a Worker host passes its `/workspace` store's; worker/workspace.ts).
   */
  readonly workdirs?: SessionWorkdirs | undefined;
}

export interface SessionWorkdirs {
  resolve(serverRoot: string, request: WorkdirRequest): ResolvedWorkdir;
  projectId(absoluteWorkdir: string): string;
}

const diskWorkdirs: SessionWorkdirs = { resolve: resolveWorkdir, projectId: resolveProjectId };

/** What a spawned child Session takes from the `task` call that creates it. */
export interface SpawnChild {
  readonly agent: string;
  readonly defaultModel: string;
  /** One line (the contract's title limit). */
  readonly title: string;
  /** The parent's deny rules, which the child keeps whatever its agent allows. */
  readonly permissions: readonly PermissionRule[];
}

/** A stable hash of a request body: key order does not matter, values do. */
export function requestHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function toSession(row: SessionRow): Session {
  const session: Session = {
    id: row.id,
    workdir: row.workdir,
    projectId: row.projectId,
    configuration: toConfiguration(row),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    nextSequence: row.nextSequence,
  };
  if (row.defaultModel !== null) session.defaultModel = row.defaultModel;
  if (row.systemPrompt !== null) session.systemPrompt = row.systemPrompt;
  if (row.title !== null) session.title = row.title;
  if (row.forkedFrom !== null) session.forkedFrom = row.forkedFrom;
  if (row.spawnedFromSessionId !== null) session.spawnedFrom = { parentSessionId: row.spawnedFromSessionId };
  if (row.agent !== null) session.agent = row.agent;
  if (row.contextUse !== null) session.contextUse = row.contextUse as NonNullable<Session["contextUse"]>;
  return session;
}

export function toConfiguration(row: SessionRow): SessionConfiguration {
  return { revision: row.configurationRevision, permissions: row.permissions, approval: row.approval };
}

const toSavedPermission = (row: SavedPermissionRow): SavedPermission => ({
  id: row.id,
  sessionId: row.sessionId,
  action: row.action,
  resource: row.resource,
  createdAt: row.createdAt,
  sourcePermissionRequestId: row.sourcePermissionRequestId,
});

const sessionNotFound = (id: string) => notFound("session", `Session ${id} does not exist`);

export class SessionService {
  private readonly storage: StorageHandle;
  private readonly serverRoot: string;
  private readonly now: () => number;
  private readonly hub: ActivityHub | undefined;
  private readonly onDeleted: (sessionIds: readonly string[]) => void;
  private readonly agents: ((workdir: string) => AgentCatalog | Promise<AgentCatalog>) | undefined;
  private readonly workdirs: SessionWorkdirs;

  constructor(options: SessionServiceOptions) {
    this.storage = options.storage;
    this.serverRoot = options.serverRoot;
    this.now = options.now ?? Date.now;
    this.hub = options.hub;
    this.onDeleted = options.onDeleted ?? (() => {});
    this.agents = options.agents;
    this.workdirs = options.workdirs ?? diskWorkdirs;
  }

  private announce(server: string, sessionIds: readonly string[]): void {
    for (const id of sessionIds) this.hub?.changed(server, id);
  }

  private async row(server: string, id: string): Promise<SessionRow> {
    const row = await store.getSession(this.storage, server, id);
    if (!row) throw sessionNotFound(id);
    return row;
  }

  /** An update that found no row means the Session was deleted meanwhile. */
  private updated(id: string, row: SessionRow | undefined): Session {
    if (!row) throw sessionNotFound(id);
    this.announce(row.server, [id]);
    return toSession(row);
  }

  async get(server: string, id: string): Promise<Session> {
    return toSession(await this.row(server, id));
  }

  async create(server: string, id: string, request: CreateSessionRequest): Promise<Session> {
    const hash = requestHash(request);
    const replay = await this.replayCreate(server, id, hash);
    if (replay) return replay;
    checkModelReference(request.defaultModel, "/defaultModel");
    const workdir = this.workdirs.resolve(this.serverRoot, request);
    const agents = await this.agents?.(workdir.absolute);
    if (request.agent !== undefined && agents) primaryAgent(agents, request.agent, "/agent");
    const now = this.now();
    try {
      const row = await store.insertSession(this.storage, {
        id,
        server,
        workdir: workdir.stored,
        projectId: this.workdirs.projectId(workdir.absolute),
        defaultModel: request.defaultModel ?? null,
        systemPrompt: request.systemPrompt ?? null,
        agent: request.agent ?? null,
        permissions: request.permissions ?? [],
        approval: request.approval ?? {},
        createdAt: now,
        updatedAt: now,
        createRequestHash: hash,
      });
      this.announce(server, [id]);
      return toSession(row);
    } catch (error) {
      // A concurrent create of the same id won the insert: answer as a replay would.
      const raced = await this.replayCreate(server, id, hash);
      if (raced) return raced;
      throw error;
    }
  }

  private async replayCreate(server: string, id: string, hash: string): Promise<Session | undefined> {
    if (await store.isRetired(this.storage, server, id)) throw conflict(`Session ${id} was deleted; its id stays retired`);
    const existing = await store.getSession(this.storage, server, id);
    if (!existing) return undefined;
    if (existing.createRequestHash !== hash) throw conflict(`Session ${id} already exists with a different creation request`);
    return toSession(existing);
  }

  /**
   * Creates the child Session a `task` call runs in: the parent's workdir and project, pinned to
   * `agent`, with the parent link (deleting the parent deletes it). Not replayable by id: each
   * call creates a new child.
   */
  async spawnChild(server: string, parentId: string, child: SpawnChild): Promise<SessionRow> {
    const parent = await this.row(server, parentId);
    const now = this.now();
    const row = await store.insertSession(this.storage, {
      id: randomUUID(),
      server,
      workdir: parent.workdir,
      projectId: parent.projectId,
      title: child.title,
      defaultModel: child.defaultModel,
      systemPrompt: null,
      agent: child.agent,
      spawnedFromSessionId: parentId,
      permissions: [...child.permissions],
      approval: parent.approval,
      createdAt: now,
      updatedAt: now,
      createRequestHash: null,
    });
    this.announce(server, [row.id]);
    return row;
  }

  async list(server: string, projectId?: string): Promise<Session[]> {
    return (await store.listSessions(this.storage, server, projectId)).map(toSession);
  }

  async children(server: string, id: string): Promise<Session[]> {
    await this.row(server, id);
    return (await store.listChildren(this.storage, server, id)).map(toSession);
  }

  async delete(server: string, id: string): Promise<{ sessionId: string }> {
    const existing = await store.getSession(this.storage, server, id);
    if (!existing) {
      // The exact replay of a completed deletion is idempotent.
      if (await store.isRetired(this.storage, server, id)) return { sessionId: id };
      throw sessionNotFound(id);
    }
    const deleted = await store.deleteSession(this.storage, server, id, this.now());
    this.onDeleted(deleted);
    this.hub?.deleted(server, deleted);
    return { sessionId: id };
  }

  async deleteServer(server: string, projectId?: string): Promise<{ server: string; sessionIds: string[] }> {
    const sessionIds = await store.deleteServer(this.storage, server, this.now(), projectId);
    this.onDeleted(sessionIds);
    this.hub?.deleted(server, sessionIds);
    return { server, sessionIds };
  }

  async setTitle(server: string, id: string, title: string): Promise<Session> {
    checkTitle(title, "/title");
    const row = await this.row(server, id);
    if (row.title === title) return toSession(row);
    return this.updated(id, await store.updateSession(this.storage, server, id, { title, updatedAt: this.now() }));
  }

  async setDefaultModel(server: string, id: string, defaultModel: string): Promise<Session> {
    checkModelReference(defaultModel, "/defaultModel");
    const row = await this.row(server, id);
    if (row.defaultModel === defaultModel) return toSession(row);
    return this.updated(id, await store.updateSession(this.storage, server, id, { defaultModel, updatedAt: this.now() }));
  }

  async configuration(server: string, id: string): Promise<SessionConfiguration> {
    return toConfiguration(await this.row(server, id));
  }

  async replaceConfiguration(server: string, id: string, request: ReplaceSessionConfigurationRequest): Promise<SessionConfiguration> {
    const row = await this.row(server, id);
    if (row.configurationRevision !== request.expectedRevision) {
      throw conflict(`Session ${id} configuration is at revision ${row.configurationRevision}, not ${request.expectedRevision}`);
    }
    const updated = await store.updateSession(
      this.storage,
      server,
      id,
      { permissions: request.permissions, approval: request.approval, configurationRevision: row.configurationRevision + 1, updatedAt: this.now() },
      { expectedConfigurationRevision: request.expectedRevision },
    );
    if (!updated) throw conflict(`Session ${id} configuration changed concurrently; read it again`);
    return toConfiguration(updated);
  }

  async savedPermissions(server: string, id: string): Promise<SavedPermission[]> {
    await this.row(server, id);
    return (await store.listSavedPermissions(this.storage, id)).map(toSavedPermission);
  }

  async removeSavedPermission(server: string, id: string, savedPermissionId: string): Promise<SavedPermission> {
    await this.row(server, id);
    const removed = await store.removeSavedPermission(this.storage, id, savedPermissionId);
    if (!removed) throw notFound("saved_permission", `Saved permission ${savedPermissionId} does not exist in Session ${id}`);
    return toSavedPermission(removed);
  }
}

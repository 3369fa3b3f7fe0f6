// The ACP sessions this connection holds open: one Ze Session each (same id), with what ACP keeps
// per session and Ze keeps per Turn — the mode (the agent a prompt names), the reasoning effort
// and the model — plus the running Turn and the client's MCP servers (memory only). Opening a
// Session that already has Turns takes the mode and effort of its latest Turn, so a loaded
// Session continues as it was left.
import { randomUUID } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { sdk, unwrap, ZeClientError, type ReasoningEffort, type Session, type Turn, type ZeClient } from "../../clients/index.js";
import type { SessionMcp } from "../../services/host/session-mcp.js";
import { acceptMcpServers, attachMcpServers, type AcceptedMcpServers } from "./mcp.js";
import { configOptions, defaultMode, modeState, readChoices, type SessionChoices } from "./options.js";

export interface LiveSession {
  readonly id: string;
  /** The Session's working directory, absolute. */
  readonly workdir: string;
  mode: string;
  effort: ReasoningEffort | undefined;
  /** The model in use: the Session's default, else the catalog's, else the latest Turn's. */
  model: string | undefined;
  title: string | undefined;
  running: { readonly turnId: string; cancelled: boolean; submitted: boolean } | undefined;
  mcp: AcceptedMcpServers;
}

export interface SessionHost {
  readonly api: ZeClient;
  readonly server: string;
  /** The embedded host's root: relative Session workdirs resolve against it. */
  readonly serverRoot: string;
  readonly log: (line: string) => void;
  /** Attaches MCP servers to one Session (the embedded host's); absent, client servers are reported and left out. */
  readonly mcp?: SessionMcp | undefined;
}

/** The client's cwd as an existing absolute directory with symlinks resolved. */
export function resolveCwd(cwd: string): string {
  if (!isAbsolute(cwd)) throw acp.RequestError.invalidParams({ cwd }, "cwd must be an absolute path");
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    throw acp.RequestError.invalidParams({ cwd }, `cwd ${cwd} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw acp.RequestError.invalidParams({ cwd }, `cwd ${cwd} is not a directory`);
  return real;
}

/** Ze errors as JSON-RPC errors: a missing Session is ACP's session-not-found, a refused request invalid params. */
export function acpError(error: unknown, sessionId?: string): unknown {
  if (error instanceof ZeClientError) {
    if (error.status === 404 && sessionId !== undefined) return acp.RequestError.sessionNotFound(sessionId);
    // A ValidationError is the caller's to fix whatever its status (400, or 413 for a body over 1 MiB).
    if (error.body._tag === "ValidationError") return acp.RequestError.invalidParams({ _tag: error.body._tag }, error.message);
    return acp.RequestError.internalError({ _tag: error.body._tag, status: error.status }, error.message);
  }
  return error;
}

export class Sessions {
  private readonly live = new Map<string, LiveSession>();

  constructor(readonly host: SessionHost) {}

  get(sessionId: string): LiveSession {
    const live = this.live.get(sessionId);
    if (!live) throw acp.RequestError.sessionNotFound(sessionId);
    return live;
  }

  /** Creates a Ze Session in `cwd` and opens it. */
  async create(cwd: string, mcpServers: readonly acp.McpServer[]): Promise<{ live: LiveSession; choices: SessionChoices }> {
    const workdir = resolveCwd(cwd);
    const { api, server } = this.host;
    const sessionId = randomUUID();
    const { session } = await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: { workdir } }));
    return this.open(session, undefined, mcpServers);
  }

  /** Opens an existing Session (load, resume, fork), taking its mode and effort from its latest Turn. */
  async resume(sessionId: string, mcpServers: readonly acp.McpServer[] | undefined): Promise<{ live: LiveSession; choices: SessionChoices; turns: Turn[] }> {
    const { api, server } = this.host;
    let session: Session;
    let turns: Turn[];
    try {
      session = (await unwrap(sdk.getSession({ client: api.client, path: { server, sessionId } }))).session;
      turns = await this.turns(sessionId);
    } catch (error) {
      throw acpError(error, sessionId);
    }
    const opened = await this.open(session, turns.at(-1), mcpServers);
    return { ...opened, turns };
  }

  /** Forks `sourceId` (its whole settled history) into a new Session and opens it. */
  async fork(sourceId: string, mcpServers: readonly acp.McpServer[] | undefined): Promise<{ live: LiveSession; choices: SessionChoices }> {
    const { api, server } = this.host;
    const forkedSessionId = randomUUID();
    try {
      await unwrap(sdk.forkSession({ client: api.client, path: { server, sessionId: sourceId, forkedSessionId }, body: {} }));
    } catch (error) {
      throw acpError(error, sourceId);
    }
    const opened = await this.resume(forkedSessionId, mcpServers);
    const source = this.live.get(sourceId);
    // A fork of an open session continues in that session's mode and effort.
    if (source) {
      opened.live.mode = source.mode;
      opened.live.effort = source.effort;
    }
    return opened;
  }

  /** Forgets an open session and stops its MCP servers (its running Turn is cancelled by the caller). */
  async close(sessionId: string): Promise<LiveSession | undefined> {
    const live = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (live && live.mcp.servers.length > 0) await this.host.mcp?.detach(sessionId);
    return live;
  }

  all(): LiveSession[] {
    return [...this.live.values()];
  }

  /** Every Turn of the Session, oldest first. */
  async turns(sessionId: string): Promise<Turn[]> {
    const { api, server } = this.host;
    const turns: Turn[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await unwrap(
        sdk.listSessionTurns({ client: api.client, path: { server, sessionId }, query: { limit: "100", ...(after !== undefined ? { afterSequence: String(after) } : {}) } }),
      );
      turns.push(...page.turns.map((state) => state.turn));
      if (page.nextAfterSequence === undefined || page.turns.length === 0) return turns;
      after = page.nextAfterSequence;
    }
  }

  workdirOf(session: Session): string {
    return isAbsolute(session.workdir) ? session.workdir : resolve(this.host.serverRoot, session.workdir);
  }

  /** The ACP view of an open session's modes and config options. */
  async describe(live: LiveSession, choices?: SessionChoices): Promise<{ modes: acp.SessionModeState; configOptions: acp.SessionConfigOption[] }> {
    const read = choices ?? (await readChoices(this.host.api, this.host.server, live.id));
    return { modes: modeState(read, live.mode), configOptions: configOptions(read, live.model, live.effort) };
  }

  private async open(session: Session, latest: Turn | undefined, mcpServers: readonly acp.McpServer[] | undefined): Promise<{ live: LiveSession; choices: SessionChoices }> {
    const choices = await readChoices(this.host.api, this.host.server, session.id);
    const previous = this.live.get(session.id);
    const live: LiveSession = {
      id: session.id,
      workdir: this.workdirOf(session),
      mode: previous?.mode ?? latest?.request.agent ?? session.agent ?? defaultMode(choices),
      effort: previous?.effort ?? latest?.request.reasoningEffort,
      model: session.defaultModel ?? choices.catalog?.defaultModel ?? latest?.model,
      title: session.title,
      running: previous?.running,
      mcp: acceptMcpServers(mcpServers, session.id, this.host.log),
    };
    this.live.set(session.id, live);
    const { mcp, log } = this.host;
    // The client resends its servers on every load or resume: what it sends now replaces the earlier ones.
    if (mcp && (live.mcp.servers.length > 0 || (previous?.mcp.servers.length ?? 0) > 0)) await attachMcpServers(mcp, live.mcp, live.id, live.workdir, log);
    else if (!mcp) for (const server of live.mcp.servers) log(`ze-harness acp: session ${live.id}: MCP server ${JSON.stringify(server.name)} not attached: this host attaches no Session MCP servers`);
    return { live, choices };
  }
}

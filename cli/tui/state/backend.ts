// Every server call the TUI makes, through the typed client only (clients/): Sessions, prompts,
// steering, cancellation, replies, pickers' lists, forks, compaction and sub-agents.
import { randomUUID } from "node:crypto";
import { resolveProjectId } from "../../../clients/project.js";
import {
  sdk,
  unwrap,
  type CatalogSnapshot,
  type CreateSessionRequest,
  type PermissionReply,
  type PromptPart,
  type ReasoningEffort,
  type Session,
  type SessionAgentEntry,
  type SkillListEntry,
  type ZeClient,
} from "../../../clients/index.js";

/** The built-in assistant system prompt new TUI Sessions get. */
export const TUI_SYSTEM_PROMPT =
  "You are Ze, a helpful coding assistant working in the user's project directory through the tools you are given. Be concise; prefer doing over explaining.";

export interface Where {
  /** The directory the client runs from, or the explicit --workdir. */
  readonly directory: string | undefined;
  /** True when client and server share a machine (embedded or daemon): the workdir is sent as is. */
  readonly local: boolean;
}

export interface NextTurn {
  readonly model?: string | undefined;
  readonly agent?: string | undefined;
  readonly effort?: ReasoningEffort | undefined;
  readonly skills?: readonly string[] | undefined;
}

export class Backend {
  constructor(
    readonly api: ZeClient,
    readonly server: string,
    readonly where: Where,
    /** This machine's stable author identity (author.ts), sent with every prompt. */
    readonly authorId?: string | undefined,
  ) {}

  private get client() {
    return this.api.client;
  }

  private get headers() {
    return { "x-ze-harness-client-id": this.api.clientId };
  }

  /** Creates a Session in the client's directory; when that directory cannot be used, in the server root (`fallback` says so). */
  async createSession(): Promise<{ session: Session; fallback?: string }> {
    const base: CreateSessionRequest = { systemPrompt: TUI_SYSTEM_PROMPT };
    const directory = this.where.directory;
    const attempt = async (body: CreateSessionRequest) =>
      (await unwrap(sdk.createSession({ client: this.client, path: { server: this.server, sessionId: randomUUID() }, body }))).session;
    if (directory === undefined) return { session: await attempt(base) };
    try {
      return { session: await attempt({ ...base, ...(this.where.local ? { workdir: directory } : { clientWorkdir: directory }) }) };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { session: await attempt(base), fallback: `${directory} cannot be used (${reason}); this Session uses the server root` };
    }
  }

  async getSession(sessionId: string): Promise<Session> {
    return (await unwrap(sdk.getSession({ client: this.client, path: { server: this.server, sessionId } }))).session;
  }

  async queue(sessionId: string, prompt: PromptPart[], next: NextTurn): Promise<string> {
    const turnId = randomUUID();
    await unwrap(
      sdk.submitPrompt({
        client: this.client,
        path: { server: this.server, sessionId },
        headers: this.headers,
        body: {
          delivery: "queue",
          turnId,
          prompt,
          ...(this.authorId !== undefined ? { authorId: this.authorId } : {}),
          ...(next.model !== undefined ? { model: next.model } : {}),
          ...(next.agent !== undefined ? { agent: next.agent } : {}),
          ...(next.effort !== undefined ? { reasoningEffort: next.effort } : {}),
          ...(next.skills && next.skills.length > 0 ? { skills: [...next.skills] } : {}),
        },
      }),
    );
    return turnId;
  }

  async steer(sessionId: string, turnId: string, prompt: PromptPart[], steerId: string = randomUUID()): Promise<void> {
    await unwrap(
      sdk.submitPrompt({
        client: this.client,
        path: { server: this.server, sessionId },
        headers: this.headers,
        body: { delivery: "steer", steerId, expectedTurnId: turnId, prompt, ...(this.authorId !== undefined ? { authorId: this.authorId } : {}) },
      }),
    );
  }

  /** The model later Turns of `sessionId` use (unless a prompt or its agent names another). */
  async setDefaultModel(sessionId: string, defaultModel: string): Promise<Session> {
    return (await unwrap(sdk.setSessionDefaultModel({ client: this.client, path: { server: this.server, sessionId }, body: { defaultModel } }))).session;
  }

  async cancel(sessionId: string, turnId: string): Promise<void> {
    await unwrap(sdk.cancelTurn({ client: this.client, path: { server: this.server, sessionId, turnId }, body: { reason: "cancelled from the TUI" } }));
  }

  async replyPermission(sessionId: string, permissionRequestId: string, reply: PermissionReply): Promise<void> {
    await unwrap(sdk.replyPermission({ client: this.client, path: { server: this.server, sessionId, permissionRequestId }, body: { reply } }));
  }

  async replyQuestion(sessionId: string, questionRequestId: string, answers: string[][]): Promise<void> {
    await unwrap(sdk.replyQuestion({ client: this.client, path: { server: this.server, sessionId, questionRequestId }, body: { answers } }));
  }

  async rejectQuestion(sessionId: string, questionRequestId: string): Promise<void> {
    await unwrap(sdk.rejectQuestion({ client: this.client, path: { server: this.server, sessionId, questionRequestId } }));
  }

  /** This project's Sessions (the client directory's project), newest activity first, top-level only. */
  async sessions(): Promise<Session[]> {
    const projectId = this.where.directory !== undefined ? resolveProjectId(this.where.directory) : undefined;
    const { sessions } = await unwrap(sdk.listSessions({ client: this.client, path: { server: this.server }, ...(projectId !== undefined ? { query: { projectId } } : {}) }));
    return sessions.filter((session) => session.spawnedFrom === undefined).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The one Session (of any project) whose id starts with `prefix`; an error naming the matches otherwise. */
  async sessionByPrefix(prefix: string): Promise<string> {
    const wanted = prefix.toLowerCase();
    const { sessions } = await unwrap(sdk.listSessions({ client: this.client, path: { server: this.server } }));
    const matches = sessions.map((session) => session.id).filter((id) => id.startsWith(wanted));
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0) throw new Error(`no Session id starts with ${JSON.stringify(prefix)}`);
    throw new Error(`${JSON.stringify(prefix)} matches ${matches.length} Sessions: ${matches.sort().join(", ")}; type more of the id`);
  }

  async models(sessionId: string | undefined): Promise<CatalogSnapshot> {
    if (sessionId !== undefined) return unwrap(sdk.sessionModels({ client: this.client, path: { server: this.server, sessionId } }));
    return unwrap(sdk.models({ client: this.client }));
  }

  async agents(sessionId: string): Promise<{ defaultAgent?: string; agents: SessionAgentEntry[] }> {
    return unwrap(sdk.sessionAgents({ client: this.client, path: { server: this.server, sessionId } }));
  }

  async skills(sessionId: string | undefined): Promise<SkillListEntry[]> {
    const result =
      sessionId !== undefined
        ? await unwrap(sdk.sessionSkills({ client: this.client, path: { server: this.server, sessionId } }))
        : await unwrap(sdk.skills({ client: this.client }));
    return result.skills;
  }

  /** Forks `sessionId` before `turnId` (copying the history before it) and returns the fork's id. */
  async fork(sessionId: string, turnId: string): Promise<string> {
    const forkedSessionId = randomUUID();
    await unwrap(sdk.forkSession({ client: this.client, path: { server: this.server, sessionId, forkedSessionId }, body: { turnId } }));
    return forkedSessionId;
  }

  async children(sessionId: string): Promise<Session[]> {
    return (await unwrap(sdk.listSessionChildren({ client: this.client, path: { server: this.server, sessionId } }))).sessions;
  }

  async compact(sessionId: string): Promise<void> {
    await unwrap(
      sdk.submitContextCompaction({ client: this.client, path: { server: this.server, sessionId }, headers: this.headers, body: { compactionId: randomUUID() } }),
    );
  }

  async background(sessionId: string): Promise<boolean> {
    return (await unwrap(sdk.promoteSessionBackground({ client: this.client, path: { server: this.server, sessionId } }))).promoted;
  }
}

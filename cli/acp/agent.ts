// The ACP agent: an AgentApp (@agentclientprotocol/sdk, the /unstable v1 entrypoint for fork and
// prompt usage) whose handlers drive Ze Harness through the generated client. One connection,
// one client: its capabilities (form elicitation) are read at initialize.
import * as acp from "@agentclientprotocol/sdk/unstable";
import { sdk, unwrap, watchTurn, type Session, type ZeClient } from "../../clients/index.js";
import { EFFORT_OPTION, DEFAULT_EFFORT, DEFAULT_MODEL, isEffort, isMode, MODEL_OPTION, modelChoices, readChoices } from "./options.js";
import { promptUpdates, TurnProjector } from "./projection.js";
import { cancelPrompt, runPrompt } from "./prompt.js";
import type { SessionMcp } from "../../services/host/session-mcp.js";
import { acpError, resolveCwd, Sessions } from "./sessions.js";

export interface AcpAgentOptions {
  readonly api: ZeClient;
  readonly server: string;
  readonly serverRoot: string;
  /** The Ze Harness release, for agentInfo. */
  readonly version: string;
  /** Diagnostics (stderr: stdout carries only protocol frames). */
  readonly log: (line: string) => void;
  /** Attaches the client's MCP servers to one Session. */
  readonly mcp?: SessionMcp | undefined;
}

/** How long a client's departure waits for its cancelled Turns to settle. */
const CANCEL_SETTLE_MS = 5_000;

export interface AcpAgent {
  readonly app: acp.AgentApp;
  /** Cancels every running Turn (the client went away): they settle cancelled, not as a host shutdown. */
  cancelAll(): Promise<void>;
}

export function createAcpAgent(options: AcpAgentOptions): AcpAgent {
  const { api, server, log } = options;
  const sessions = new Sessions({ api, server, serverRoot: options.serverRoot, log, mcp: options.mcp });
  let forms = false;

  const replay = async (client: acp.AgentContext, sessionId: string, workdir: string, turns: Awaited<ReturnType<Sessions["turns"]>>): Promise<void> => {
    for (const turn of turns) {
      const updates = [...promptUpdates(turn.request.prompt, `${turn.id}:prompt`), ...new TurnProjector(workdir).updates(turn)];
      for (const update of updates) await client.notify("session/update", { sessionId, update });
    }
  };

  const app = acp
    .agent({ name: "ze-harness" })
    .onRequest("initialize", ({ params }) => {
      forms = params.clientCapabilities?.elicitation?.form != null;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "ze-harness", title: "Ze Harness", version: options.version },
        authMethods: [],
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: options.mcp !== undefined, sse: false },
          sessionCapabilities: { list: {}, resume: {}, fork: {}, close: {} },
        },
      };
    })
    .onRequest("session/new", async ({ params }) => {
      try {
        const { live, choices } = await sessions.create(params.cwd, params.mcpServers);
        return { sessionId: live.id, ...(await sessions.describe(live, choices)) };
      } catch (error) {
        throw acpError(error);
      }
    })
    .onRequest("session/load", async ({ params, client }) => {
      const { live, choices, turns } = await sessions.resume(params.sessionId, params.mcpServers);
      await replay(client, live.id, live.workdir, turns);
      return sessions.describe(live, choices);
    })
    .onRequest("session/resume", async ({ params }) => {
      const { live, choices } = await sessions.resume(params.sessionId, params.mcpServers);
      return sessions.describe(live, choices);
    })
    .onRequest("session/fork", async ({ params }) => {
      const { live, choices } = await sessions.fork(params.sessionId, params.mcpServers);
      return { sessionId: live.id, ...(await sessions.describe(live, choices)) };
    })
    .onRequest("session/close", async ({ params }) => {
      const live = await sessions.close(params.sessionId);
      if (!live) throw acp.RequestError.sessionNotFound(params.sessionId);
      await cancelPrompt({ api, server, log }, live);
      return {};
    })
    .onRequest("session/list", async ({ params }) => {
      const cwd = params.cwd != null ? resolveCwd(params.cwd) : undefined;
      let listed: Session[];
      try {
        listed = (await unwrap(sdk.listSessions({ client: api.client, path: { server } }))).sessions;
      } catch (error) {
        throw acpError(error);
      }
      const infos = listed
        .filter((session) => session.spawnedFrom === undefined)
        .map((session) => ({ session, cwd: sessions.workdirOf(session) }))
        .filter((entry) => cwd === undefined || entry.cwd === cwd)
        .sort((a, b) => b.session.updatedAt - a.session.updatedAt)
        .map(({ session, cwd: workdir }) => ({
          sessionId: session.id,
          cwd: workdir,
          ...(session.title !== undefined ? { title: session.title } : {}),
          updatedAt: new Date(session.updatedAt).toISOString(),
        }));
      return { sessions: infos };
    })
    .onRequest("session/set_mode", async ({ params }) => {
      const live = sessions.get(params.sessionId);
      const choices = await readChoices(api, server, live.id);
      if (!isMode(choices, params.modeId)) throw acp.RequestError.invalidParams({ modeId: params.modeId }, `unknown mode ${params.modeId}`);
      live.mode = params.modeId;
      return {};
    })
    .onRequest("session/set_config_option", async ({ params }) => {
      const live = sessions.get(params.sessionId);
      const choices = await readChoices(api, server, live.id);
      const value = params.value;
      if (typeof value !== "string") throw acp.RequestError.invalidParams({ configId: params.configId }, `${params.configId} takes one of its listed values`);
      if (params.configId === MODEL_OPTION) {
        if (!modelChoices(choices, live.model).some((option) => option.value === value)) throw acp.RequestError.invalidParams({ value }, `unknown model ${value}`);
        if (value === DEFAULT_MODEL && live.model === undefined) return { configOptions: (await sessions.describe(live, choices)).configOptions };
        try {
          await unwrap(sdk.setSessionDefaultModel({ client: api.client, path: { server, sessionId: live.id }, body: { defaultModel: value } }));
        } catch (error) {
          throw acpError(error, live.id);
        }
        live.model = value;
      } else if (params.configId === EFFORT_OPTION) {
        if (value !== DEFAULT_EFFORT && !isEffort(value)) throw acp.RequestError.invalidParams({ value }, `unknown reasoning effort ${value}`);
        live.effort = value === DEFAULT_EFFORT ? undefined : value;
      } else {
        throw acp.RequestError.invalidParams({ configId: params.configId }, `unknown config option ${params.configId}`);
      }
      return { configOptions: (await sessions.describe(live, choices)).configOptions };
    })
    .onRequest("session/prompt", async ({ params, client, signal }) => {
      const live = sessions.get(params.sessionId);
      // A client that cancels the request itself ($/cancel_request) cancels the Turn as session/cancel does.
      const onAbort = (): void => void cancelPrompt({ api, server, log }, live);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        return await runPrompt({ api, server, client, forms, log }, live, params.prompt);
      } catch (error) {
        throw acpError(error, live.id);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    })
    .onNotification("session/cancel", async ({ params }) => {
      const live = sessions.all().find((candidate) => candidate.id === params.sessionId);
      if (live) await cancelPrompt({ api, server, log }, live);
    });
  return {
    app,
    cancelAll: async () => {
      await Promise.all(
        sessions.all().map(async (live) => {
          const running = live.running;
          if (!running?.submitted) return;
          await cancelPrompt({ api, server, log }, live);
          // Give the cancellation a moment to settle before the host stops (then host_shutdown ends it).
          await watchTurn(api, { server, sessionId: live.id, turnId: running.turnId, signal: AbortSignal.timeout(CANCEL_SETTLE_MS) }).catch(() => {});
        }),
      );
    },
  };
}

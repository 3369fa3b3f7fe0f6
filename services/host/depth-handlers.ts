// The Session-depth operations this host serves from its catalogs and sub-agent host: the
// effective agents, the Skills of the host and of a Session's workdir (safe metadata only), and
// detaching a Session's foreground sub-agent calls to the background.
import type { Handlers } from "../../generated/server/routes.js";
import { absoluteWorkdir } from "../contract/paths.js";
import type { SessionService } from "../core/sessions.js";
import type { Subagents } from "../core/subagents/host.js";
import type { RequestContext } from "../http/handler.js";
import type { HostCatalogs } from "./catalogs.js";

export interface DepthHandlerServices {
  readonly sessions: SessionService;
  readonly catalogs: HostCatalogs;
  /** Absent on a host that runs no Turns (nothing can wait in the foreground there). */
  readonly subagents: Subagents | undefined;
  readonly serverRoot: string;
}

type DepthOperations = Pick<Handlers<RequestContext>, "sessionAgents" | "sessionSkills" | "skills" | "promoteSessionBackground">;

export function depthHandlers({ sessions, catalogs, subagents, serverRoot }: DepthHandlerServices): DepthOperations {
  const skillsOf = async (workdir: string) => {
    const [{ skillCatalogEntry }, discovery] = await Promise.all([import("../workspace/skills.js"), catalogs.skills(workdir)]);
    return discovery.skills.map((skill) => skillCatalogEntry(skill, "host"));
  };
  return {
    sessionAgents: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: catalogs.agents.toSessionAgentsResponse() };
    },
    sessionSkills: async ({ path }) => {
      const session = await sessions.get(path.server, path.sessionId);
      return { status: 200, body: { sessionId: session.id, skills: await skillsOf(absoluteWorkdir(serverRoot, session.workdir)) } };
    },
    skills: async () => ({ status: 200, body: { skills: await skillsOf(serverRoot) } }),
    promoteSessionBackground: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: { promoted: subagents?.promote(path.sessionId) ?? false } };
    },
  };
}

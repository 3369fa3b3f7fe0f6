// The Session-depth operations this host serves from its catalogs and sub-agent host: the
// effective agents (of the Session's project), the Skills of the host and of a Session's workdir (safe metadata only), and
// detaching a Session's foreground sub-agent calls to the background.
import type { Handlers } from "../../generated/server/routes.js";
import { absoluteWorkdir } from "../contract/paths.js";
import type { SessionService } from "../core/sessions.js";
import type { Subagents } from "../core/subagents/host.js";
import type { RequestContext } from "../http/handler.js";
import type { HostCatalogs } from "./catalogs.js";

export interface DepthHandlerServices {
  readonly sessions: SessionService;
  /** The host's catalogs (the host-wide Skills operation). */
  readonly catalogs: HostCatalogs;
  /** The catalogs of the project an absolute workdir belongs to (its nearest project file). */
  readonly catalogsFor: (workdir: string) => Promise<HostCatalogs>;
  /** Absent on a host that runs no Turns (nothing can wait in the foreground there). */
  readonly subagents: Subagents | undefined;
  readonly serverRoot: string;
}

type DepthOperations = Pick<Handlers<RequestContext>, "sessionAgents" | "sessionSkills" | "skills" | "promoteSessionBackground">;

export function depthHandlers({ sessions, catalogs, catalogsFor, subagents, serverRoot }: DepthHandlerServices): DepthOperations {
  const skillsOf = async (workdir: string, from: HostCatalogs) => {
    const [{ skillCatalogEntry }, discovery] = await Promise.all([import("../workspace/skills.js"), from.skills(workdir)]);
    return discovery.skills.map((skill) => skillCatalogEntry(skill, "host"));
  };
  return {
    sessionAgents: async ({ path }) => {
      const session = await sessions.get(path.server, path.sessionId);
      const project = await catalogsFor(absoluteWorkdir(serverRoot, session.workdir));
      return { status: 200, body: project.agents.toSessionAgentsResponse() };
    },
    sessionSkills: async ({ path }) => {
      const session = await sessions.get(path.server, path.sessionId);
      const workdir = absoluteWorkdir(serverRoot, session.workdir);
      return { status: 200, body: { sessionId: session.id, skills: await skillsOf(workdir, await catalogsFor(workdir)) } };
    },
    skills: async () => ({ status: 200, body: { skills: await skillsOf(serverRoot, catalogs) } }),
    promoteSessionBackground: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: { promoted: subagents?.promote(path.sessionId) ?? false } };
    },
  };
}

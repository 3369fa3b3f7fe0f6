// Binds the workspace observation operations (spec/workspace-files.tsp) to services/workspace:
// git status and diff, directory listing and watching, chunked file reads; Turn patches and
// rewind come from services/core/rewind. Each operation first reads the Session (404 when it
// is gone) and works on its workdir. A refused repository or workspace feature is the
// contract's 422 `WorkspaceUnsupportedError`, a rewind over files changed outside the harness
// its 409 `RewindConflictError`; both are returned as declared statuses.
import type { Handlers, SseMessage } from "../../generated/server/routes.js";
import type { PermissionRule } from "../../generated/client/types.gen.js";
import { absoluteWorkdir } from "../contract/paths.js";
import { forbidden } from "../contract/failure.js";
import { evaluateConfigured } from "../core/permissions/index.js";
import type { SessionService } from "../core/sessions.js";
import type { RequestContext } from "../http/handler.js";
import { isWorkspaceUnsupported } from "../workspace/git/unsupported.js";
import { decodeRequestPath, resolveDirectory } from "../workspace/files/resolve.js";
import type { WatchTiming } from "../workspace/files/watch.js";
import { RewindConflict, type RewindService } from "../core/rewind/service.js";

export interface WorkspaceFilesServices {
  readonly sessions: SessionService;
  readonly serverRoot: string;
  /** The configured permission rules of the project an absolute workdir belongs to (a `read` deny there refuses a file read). */
  readonly serverRules?: ((workdir: string) => Promise<readonly PermissionRule[] | undefined>) | undefined;
  readonly watchTiming?: WatchTiming | undefined;
  readonly rewind: RewindService;
}

type WorkspaceOperations = Pick<Handlers<RequestContext>, "gitStatus" | "gitDiff" | "listFiles" | "readFile" | "watchFiles" | "snapshotPatch" | "readPatch" | "rewindTurn">;

/** Runs `fn`; a refused feature becomes the declared 422. */
async function unsupportedAs422<T>(fn: () => Promise<T>): Promise<T | { status: 422; body: import("../../generated/client/types.gen.js").WorkspaceUnsupportedErrorEncoded }> {
  try {
    return await fn();
  } catch (error) {
    if (isWorkspaceUnsupported(error)) return { status: 422, body: error.body };
    throw error;
  }
}

/** Numbers a finite or endless item sequence as SSE messages (`id:` = `sequence`). */
async function* sequenced<T extends { type: string }>(items: AsyncIterable<T> | Iterable<T>): AsyncGenerator<SseMessage<T & { sequence: number }>> {
  let sequence = 0;
  for await (const item of items) {
    sequence += 1;
    yield { id: String(sequence), event: item.type, data: { ...item, sequence } };
  }
}

export function workspaceFilesHandlers({ sessions, serverRoot, serverRules, watchTiming, rewind }: WorkspaceFilesServices): WorkspaceOperations {
  const workdirOf = async (server: string, sessionId: string) => {
    const session = await sessions.get(server, sessionId);
    return { session, workdir: absoluteWorkdir(serverRoot, session.workdir) };
  };
  return {
    gitStatus: async ({ path }, context) =>
      unsupportedAs422(async () => {
        const { workdir } = await workdirOf(path.server, path.sessionId);
        const { gitStatus } = await import("../workspace/git/status.js");
        return { status: 200 as const, body: { status: await gitStatus(workdir, context.signal) } };
      }),
    gitDiff: async ({ path, query }, context) =>
      unsupportedAs422(async () => {
        const { workdir } = await workdirOf(path.server, path.sessionId);
        const { gitDiff } = await import("../workspace/git/diff.js");
        return { status: 200 as const, body: { diff: await gitDiff(workdir, query.area, query.path, context.signal) } };
      }),
    listFiles: async ({ path, query }) =>
      unsupportedAs422(async () => {
        const { workdir } = await workdirOf(path.server, path.sessionId);
        const { listFiles } = await import("../workspace/files/list.js");
        return { status: 200 as const, body: await listFiles(workdir, query?.path, query?.cursor) };
      }),
    readFile: async ({ path, query }) => {
      const { session, workdir } = await workdirOf(path.server, path.sessionId);
      const decoded = decodeRequestPath(query.path);
      // The Session's permission boundary: a configured `read` deny on the path refuses it.
      const resource = Buffer.from(decoded.bytes).toString("utf8");
      const decision = evaluateConfigured({ action: "read", resource }, { server: await serverRules?.(workdir), session: session.configuration.permissions });
      if (decision.effect === "deny") throw forbidden("Reading this path is denied by the Session's permission rules");
      const { captureFile } = await import("../workspace/files/read.js");
      const items = await captureFile(workdir, decoded, query.expectedVersion);
      return { status: 200, stream: sequenced(items) };
    },
    watchFiles: async ({ path, query }, context) => {
      const { workdir } = await workdirOf(path.server, path.sessionId);
      const directory = await resolveDirectory(workdir, query?.path);
      const { watchDirectory } = await import("../workspace/files/watch.js");
      return { status: 200, stream: sequenced(watchDirectory(directory, context.signal, watchTiming)) };
    },
    snapshotPatch: async ({ path }) => {
      const { workdir } = await workdirOf(path.server, path.sessionId);
      return { status: 200, body: { patch: await rewind.snapshotPatch(path.sessionId, path.turnId, workdir) } };
    },
    readPatch: async ({ path, query }) => {
      await workdirOf(path.server, path.sessionId);
      return { status: 200, body: await rewind.readPatch(path.sessionId, path.turnId, query ?? {}) };
    },
    rewindTurn: async ({ path, body }) => {
      const { workdir } = await workdirOf(path.server, path.sessionId);
      try {
        return { status: 200, body: { rewind: await rewind.rewind(path.sessionId, path.turnId, workdir, body?.filesOnly === true) } };
      } catch (error) {
        if (error instanceof RewindConflict) return { status: 409, body: error.body };
        throw error;
      }
    },
  };
}

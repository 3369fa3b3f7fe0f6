// What the Worker host answers for the operations it does not serve: each a typed 503
// UnavailableError naming why — a capability Workers cannot have (local processes) as the
// reference words it, or one this host does not provide yet. Never a silent fallback.
import { routes, type Handlers, type OperationId } from "../generated/server/routes.js";
import { unavailable } from "../services/contract/failure.js";

/** Capabilities a Worker cannot have, by operation. */
const ABSENT: readonly [RegExp, string][] = [
  [/Terminal/, "terminals are unavailable because Workers cannot spawn local processes"],
  [/^logs$/, "daemon logs are unavailable: only the shared local daemon keeps a log"],
  [/ProviderLogin$/, "Cloudflare Worker hosts report login as unsupported"],
  [/^git(Status|Diff)$/, "git status and diff are unavailable: the Cloudflare Worker host has no git, and its /workspace is a file store in the server object's SQLite, not a repository"],
  [
    /^(snapshotPatch|readPatch|rewindTurn)$/,
    "Turn patches and rewind are unavailable: the Cloudflare Worker host has no git to record a Turn's workdir changes with, so none are recorded",
  ],
];

export function workerCapabilityMessage(operationId: OperationId): string {
  for (const [pattern, message] of ABSENT) if (pattern.test(operationId)) return message;
  return `${operationId} is not provided by the Cloudflare Worker host yet`;
}

/** Every operation answering its Worker unavailability; the served ones are spread over it. */
export function workerUnavailableHandlers<Context>(): Handlers<Context> {
  const handlers: Record<string, () => Promise<never>> = {};
  for (const route of routes) {
    const message = workerCapabilityMessage(route.operationId);
    handlers[route.operationId] = async () => {
      throw unavailable(message);
    };
  }
  return handlers as unknown as Handlers<Context>;
}

// Resolves the policy a Turn runs under, fixed at admission: the server's configured
// rules and limits, then the Session's rules and approval setting, then the agent's rules. Each limit records its
// origin (`configured` when a config layer or the Session set it, `platform` for Ze's own
// defaults, `absent` for an unlimited value nobody set).
import type { TurnPolicy, PolicyLimit, PolicyCountLimit, PolicyPacing, PermissionRule, Session } from "../../../generated/client/types.gen.js";
import type { Config } from "../../config/index.js";

/** Ze's default context safety reserve (model units) when the config sets none. */
export const DEFAULT_SAFETY_RESERVE_UNITS = 1024;
/** Sub-agents may nest one level by default. */
export const DEFAULT_SUBAGENT_DEPTH = 1;
/**
 * Attempts per model request when the config sets none. The reference leaves it unlimited, but
 * with no pacing that would spin on a provider that keeps failing, so Ze caps it (origin `platform`).
 */
export const DEFAULT_PROVIDER_ATTEMPTS = 3;

type ConfiguredLimit = { kind: "unlimited" } | { kind: "finite"; value: number };

function limit(configured: ConfiguredLimit | undefined, platformDefault?: number): PolicyLimit {
  if (configured === undefined) {
    return platformDefault === undefined ? { kind: "unlimited", origin: "absent" } : { kind: "finite", value: platformDefault, origin: "platform" };
  }
  if (configured.kind === "unlimited") return { kind: "unlimited", origin: "configured" };
  return { kind: "finite", value: configured.value, origin: "configured" };
}

function countLimit(configured: ConfiguredLimit | undefined, platformDefault?: number): PolicyCountLimit {
  if (configured === undefined) {
    return platformDefault === undefined ? { kind: "unlimited", origin: "absent" } : { kind: "finite", value: platformDefault, origin: "platform" };
  }
  if (configured.kind === "unlimited") return { kind: "unlimited", origin: "configured" };
  return { kind: "finite", value: configured.value, origin: "configured" };
}

function pacing(configured: PolicyPacing | undefined): PolicyPacing {
  return configured ?? { kind: "none" };
}

/** `agentRules`: the Turn's agent layer (see `agents.ts`), after the server's and Session's rules. */
export function resolvePolicy(config: Config, session: Session, agentRules: readonly PermissionRule[] = []): TurnPolicy {
  const approvalTimeout = session.configuration.approval.timeoutMs ?? (config.approval?.timeoutMs as ConfiguredLimit | undefined);
  return {
    version: 4,
    permissions: [...((config.permissions ?? []) as TurnPolicy["permissions"]), ...session.configuration.permissions, ...agentRules],
    permissionMatching: { caseSensitive: config.permissionMatching?.caseSensitive ?? true },
    approval: { timeoutMs: limit(approvalTimeout) },
    timeouts: { turnMs: limit(config.timeouts?.turnMs as ConfiguredLimit | undefined) },
    steering: { maxBatches: countLimit(config.steering?.maxBatches as ConfiguredLimit | undefined) },
    subagents: { maxDepth: countLimit(config.subagents?.maxDepth as ConfiguredLimit | undefined, DEFAULT_SUBAGENT_DEPTH) },
    provider: {
      maxAttempts: limit(config.provider?.maxAttempts as ConfiguredLimit | undefined, DEFAULT_PROVIDER_ATTEMPTS),
      attemptTimeoutMs: limit(config.provider?.attemptTimeoutMs as ConfiguredLimit | undefined),
      elapsedMs: limit(config.provider?.elapsedMs as ConfiguredLimit | undefined),
      pacing: pacing(config.provider?.pacing),
    },
    context: {
      safetyReserve:
        config.context?.safetyReserveUnits !== undefined
          ? { units: config.context.safetyReserveUnits, origin: "configured" }
          : { units: DEFAULT_SAFETY_RESERVE_UNITS, origin: "platform" },
    },
    images: { maxBase64Bytes: limit(config.images?.maxBase64Bytes as ConfiguredLimit | undefined) },
  };
}

// Which agent runs a Turn, and what that agent changes: the admission-time choice (the prompt's
// agent, else the Session's, else the host default; primary-capable for a top-level Session, the
// pinned agent for a spawned child), the rules it appends to the Turn's policy, and the tools it
// offers. A spawned child keeps its inherited deny rules after its agent's rules, and cannot use
// `task` unless its agent has a rule for the `task` action (reference: AgentDeclaration.permissions).
import type { PermissionRule } from "../../../generated/client/types.gen.js";
import { validationFailure } from "../../contract/failure.js";
import type { SessionRow } from "../../storage/index.js";
import type { AgentCatalog, AgentDefinition, AgentToolSelection } from "../../workspace/agents.js";
import { matchesPattern } from "../permissions/match.js";

/** The agent a Turn is admitted with: its id (always set) and its definition when the catalog has it. */
export interface TurnAgent {
  readonly id: string;
  /** Absent when a Session is pinned to an agent the catalog no longer has: the Turn then fails at run. */
  readonly definition: AgentDefinition | undefined;
}

const names = (agents: readonly AgentDefinition[]): string => agents.map((agent) => agent.id).join(", ") || "none";

/**
 * Chooses the agent of a new Turn; throws a ValidationError (`/agent`) for an agent the prompt
 * names that is unknown, subagent-only on a top-level Session, or different from a child's pin.
 */
export function chooseTurnAgent(catalog: AgentCatalog, session: SessionRow, requested: string | undefined): TurnAgent | undefined {
  if (session.spawnedFromSessionId !== null && session.agent !== null) {
    if (requested !== undefined && requested !== session.agent) {
      throw validationFailure(`Invalid request: /agent: this sub-agent Session is pinned to agent ${JSON.stringify(session.agent)}`);
    }
    return { id: session.agent, definition: catalog.spawnable(session.agent) };
  }
  if (requested !== undefined) return { id: requested, definition: primaryAgent(catalog, requested, "/agent") };
  if (session.agent !== null) return { id: session.agent, definition: catalog.primary(session.agent) };
  const fallback = catalog.defaultAgent;
  return fallback !== undefined ? { id: fallback, definition: catalog.get(fallback) } : undefined;
}

/** The primary-capable agent `id`, or a ValidationError naming `field`. */
export function primaryAgent(catalog: AgentCatalog, id: string, field: string): AgentDefinition {
  const agent = catalog.get(id);
  if (!agent) {
    const primaries = catalog.list().filter((candidate) => catalog.primary(candidate.id));
    throw validationFailure(`Invalid request: ${field}: unknown agent ${JSON.stringify(id)} (available: ${names(primaries)})`);
  }
  if (!catalog.primary(id)) throw validationFailure(`Invalid request: ${field}: agent ${JSON.stringify(id)} runs only as a sub-agent`);
  return agent;
}

/**
 * The rules an agent adds after the server's and Session's: its own, then — for a spawned child —
 * the child Session's deny rules again (inherited from its parent, so an agent rule cannot loosen
 * them) and a `task` deny unless the agent has a rule for `task`.
 */
export function agentRules(agent: AgentDefinition | undefined, session: SessionRow, caseSensitive: boolean): PermissionRule[] {
  const own = [...(agent?.permissions ?? [])];
  if (session.spawnedFromSessionId === null) return own;
  const inherited = session.permissions.filter((rule) => rule.effect === "deny");
  const mayDelegate = own.some((rule) => matchesPattern(rule.action, "task", { caseSensitive }));
  return [...own, ...inherited, ...(mayDelegate ? [] : [{ action: "task", resource: "*", effect: "deny" as const }])];
}

/** The deny rules a child inherits from its parent Turn's effective rules. */
export function inheritedDenies(parentRules: readonly PermissionRule[]): PermissionRule[] {
  return parentRules.filter((rule) => rule.effect === "deny");
}

/** Tool ids an agent's selection allows (undefined: all), and the required ones. */
export function agentToolNames(selection: AgentToolSelection | undefined): { readonly allow: readonly string[] | undefined; readonly required: readonly string[] } {
  if (!selection || selection.mode === "all") return { allow: undefined, required: [] };
  if (selection.mode === "none") return { allow: [], required: [] };
  return { allow: [...selection.names, ...(selection.optionalNames ?? [])], required: selection.names };
}

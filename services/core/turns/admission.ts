// What prompt admission reads from the workspace besides the Session row: the workdir's AGENTS.md
// (read fresh for every prompt and kept with the Turn; an unusable file fails the admission
// rather than being dropped) and the Skills a prompt selects (they must exist, be user-invocable,
// and the Turn's agent must offer `skill` without a rule denying that Skill).
import type { TurnPolicy } from "../../../generated/client/types.gen.js";
import { validationFailure } from "../../contract/failure.js";
import type { AgentCatalog, AgentDefinition } from "../../workspace/agents.js";
import { loadWorkspaceInstructions } from "../../workspace/instructions.js";
import type { SkillDiscovery } from "../../workspace/skills.js";
import { evaluateConfigured } from "../permissions/index.js";
import { agentToolNames } from "./agents.js";

/** The host catalogs admission and the loop consult. */
export interface TurnCatalogs {
  readonly agents: AgentCatalog;
  skills(workdir: string): Promise<SkillDiscovery>;
}

/** AGENTS.md as a Turn keeps it. */
export interface StoredInstructions {
  readonly path: string;
  readonly content: string;
}

/** The workdir's AGENTS.md for a new Turn (null when absent or blank); throws a ValidationError when unusable. */
export async function admissionInstructions(workdir: string): Promise<StoredInstructions | null> {
  const read = await loadWorkspaceInstructions(workdir);
  if (read === undefined) return null;
  if (read._tag === "InstructionFileInvalid") {
    throw validationFailure(`Invalid request: ${read.message} (${read.canonicalPath})`);
  }
  return { path: read.path, content: read.content };
}

/** Whether the agent's tools include `tool` (every tool when it selects all). */
export function agentOffers(agent: AgentDefinition | undefined, tool: string): boolean {
  const { allow } = agentToolNames(agent?.tools);
  return allow === undefined || allow.includes(tool);
}

/** Checks the Skills a prompt selects (`/skills/N`). */
export async function checkSelectedSkills(catalogs: TurnCatalogs, workdir: string, selected: readonly string[], agent: AgentDefinition | undefined, policy: TurnPolicy): Promise<void> {
  if (!agentOffers(agent, "skill")) {
    throw validationFailure(`Invalid request: /skills: agent ${JSON.stringify(agent?.id)} does not offer the skill tool, so it cannot load selected Skills`);
  }
  const { skills } = await catalogs.skills(workdir);
  const seen = new Set<string>();
  for (const [index, id] of selected.entries()) {
    const field = `/skills/${index}`;
    if (seen.has(id)) throw validationFailure(`Invalid request: ${field}: Skill ${JSON.stringify(id)} is selected twice`);
    seen.add(id);
    const skill = skills.find((candidate) => candidate.id === id);
    if (!skill) throw validationFailure(`Invalid request: ${field}: there is no Skill ${JSON.stringify(id)} (available: ${skills.map((s) => s.id).join(", ") || "none"})`);
    if (!skill.userInvocable) throw validationFailure(`Invalid request: ${field}: Skill ${JSON.stringify(id)} is not user-invocable`);
    const decision = evaluateConfigured({ action: "skill", resource: id }, { server: policy.permissions, caseSensitive: policy.permissionMatching.caseSensitive });
    if (decision.effect === "deny") throw validationFailure(`Invalid request: ${field}: loading Skill ${JSON.stringify(id)} is denied by the permission rules`);
  }
}

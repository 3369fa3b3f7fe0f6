// What a Turn offers its model, fixed when it starts: the agent that runs it (a Session pinned to
// an agent the catalog no longer has fails here, explicitly), the tools (the agent's selection
// from the registry, minus tools the rules deny outright, `task` only where sub-agents can run,
// `skill` only where there are Skills), their descriptions, and the system text — the agent's
// instructions, the Session's system prompt, the AGENTS.md kept at admission, and the list of
// Skills the model may load.
import type { TurnRequest } from "../../../generated/client/types.gen.js";
import type { ModelTool } from "../../providers/index.js";
import { ToolFailure, type AnyToolDefinition, type SkillCapability, type ToolDescribeContext } from "../../tools/tool.js";
import type { AgentDefinition } from "../../workspace/agents.js";
import { renderInstructionFile } from "../../workspace/instructions.js";
import type { Skill } from "../../../plugin/index.js";
import { renderPluginSkill } from "../../plugins/skills.js";
import { loadSkill, renderLoadedSkill, type LocalSkill } from "../../workspace/skills.js";
import { evaluateConfigured, isToolHidden } from "../permissions/index.js";
import type { StoredInstructions } from "./admission.js";
import { agentToolNames } from "./agents.js";
import type { RunningTurn } from "./running.js";
import { StopSignal, fault } from "./stop.js";

/** What one model request offers: the system text and the tools (the MCP servers' as connected at that moment). */
export interface TurnOffer {
  readonly system: string | undefined;
  readonly offered: ReadonlyMap<string, AnyToolDefinition>;
  readonly tools: readonly ModelTool[];
}

export interface TurnSetup {
  readonly agent: AgentDefinition | undefined;
  /** The offer of the next model request (throws a stop when an MCP tool name duplicates another tool). */
  offer(): TurnOffer;
  /** The tools offered at setup (before any MCP server connects later). */
  readonly offered: ReadonlyMap<string, AnyToolDefinition>;
  /** Skills the prompt selected, loaded through `skill` before the first model call. */
  readonly selectedSkills: readonly string[];
  readonly skills: SkillCapability | undefined;
}

/**
 * A plugin tool's `availableForModel(model)`: called for the model that receives the tools, after
 * agent and permission filtering; it can only hide a tool. A throw or a non-boolean answer is the
 * plugin's failure, which fails the Turn (`runtime_failed`).
 */
function availableFor(t: RunningTurn, tool: AnyToolDefinition | undefined): boolean {
  const predicate = (tool as { availableForModel?: (model: { providerId: string; modelId: string; upstreamId: string }) => unknown } | undefined)?.availableForModel;
  if (!predicate) return true;
  const slash = t.row.model.indexOf("/");
  const model = { providerId: t.row.model.slice(0, slash), modelId: t.row.model.slice(slash + 1), upstreamId: t.row.model.slice(slash + 1) };
  let answer: unknown;
  try {
    answer = predicate(model);
  } catch {
    throw failed("runtime_failed", `The availableForModel filter of tool ${JSON.stringify(tool!.id)} failed`);
  }
  if (typeof answer !== "boolean") throw failed("runtime_failed", `The availableForModel filter of tool ${JSON.stringify(tool!.id)} did not answer true or false`);
  return answer;
}

const failed = (code: string, message: string): StopSignal => new StopSignal({ kind: "failed", fault: fault(code, message) });

/** The agent the Turn was admitted with, or a stop when the catalog no longer has it. */
function turnAgent(t: RunningTurn): AgentDefinition | undefined {
  const id = (t.row.request as TurnRequest).agent;
  if (id === undefined) return undefined;
  const catalog = t.agents;
  const agent = t.session.spawnedFromSessionId !== null ? catalog.spawnable(id) : catalog.primary(id);
  if (!agent) throw failed("agent_unavailable", `The Session's agent ${JSON.stringify(id)} is no longer available on this host`);
  return agent;
}

/** A number per tool definition object, for the keys of `remembered`. */
const toolNumbers = new WeakMap<object, number>();
let lastToolNumber = 0;
function numberOf(tool: object): number {
  let number = toolNumbers.get(tool);
  if (number === undefined) toolNumbers.set(tool, (number = ++lastToolNumber));
  return number;
}

/**
 * The model's view of a tool, built once per tool definition and what its description depends on
 * (`describe` is a function of the offered sub-agents and tools): Turn after Turn the same
 * object, so its description (CodeMode's lists every tool's signature) and its serialized size
 * (diagnostics/record.ts `jsonLength`) are computed once.
 */
const modelTools = new WeakMap<AnyToolDefinition, Map<string, ModelTool>>();
function remembered(tool: AnyToolDefinition, key: string, build: () => ModelTool): ModelTool {
  let built = modelTools.get(tool);
  if (built === undefined) modelTools.set(tool, (built = new Map()));
  let model = built.get(key);
  if (model === undefined) {
    if (built.size >= 16) built.clear();
    model = build();
    built.set(key, model);
  }
  return model;
}

export async function setUpTurn(t: RunningTurn): Promise<TurnSetup> {
  const agent = turnAgent(t);
  const request = t.row.request as TurnRequest;
  const selection = agentToolNames(agent?.tools);
  const layers = { server: t.policy.permissions, caseSensitive: t.policy.permissionMatching.caseSensitive };
  const denied = (action: string, resource: string): boolean => evaluateConfigured({ action, resource }, layers).effect === "deny";
  const discovery = selection.allow === undefined || selection.allow.includes("skill") ? await (t.extensions?.skills ?? ((workdir: string) => t.deps.environment.skills(workdir)))(t.workdir) : undefined;
  const skills = discovery?.skills ?? [];
  const selectedSkills = request.skills ?? [];
  const subagentHost = t.deps.environment.subagents;
  const codemode = (t.extensions?.codemode ?? t.deps.environment.codemode) !== false && (selection.allow === undefined || selection.allow.length > 0);
  const unavailable = (toolId: string): boolean =>
    (toolId === "task" && subagentHost === undefined) || (toolId === "skill" && skills.length === 0 && selectedSkills.length === 0) || (toolId === "execute" && !codemode);
  // CodeMode's executor is not one of the tools an agent selects: it is withheld only with none.
  const allow = selection.allow !== undefined && codemode ? [...selection.allow, "execute"] : selection.allow;
  const offered = t.tools.select({
    allow,
    hidden: (toolId) => unavailable(toolId) || isToolHidden(toolId, layers) || !availableFor(t, t.tools.get(toolId)),
  });
  for (const name of selection.required) {
    if (!t.tools.get(name)) throw failed("tool_unavailable", `Agent ${JSON.stringify(agent?.id)} needs the tool ${JSON.stringify(name)}, which this host does not provide`);
  }
  const describe: ToolDescribeContext = {
    subagents: t.agents
      .subagents()
      .filter((candidate) => !denied("task", candidate.id))
      .map((candidate) => ({ id: candidate.id, description: candidate.description })),
  };
  const subagentsKey = JSON.stringify(describe.subagents);
  const modelTool = (tool: AnyToolDefinition, all: ReadonlyMap<string, AnyToolDefinition>): ModelTool =>
    remembered(tool, tool.describe ? `${subagentsKey}|${[...all.values()].map(numberOf).join(",")}` : "", () => ({
      name: tool.id,
      description: tool.describe?.({ ...describe, codemodeTools: [...all.values()] }) ?? tool.description,
      inputSchema: tool.inputSchema as ModelTool["inputSchema"],
    }));
  const tools = [...offered.values()].map((tool) => modelTool(tool, offered));
  const advertised = offered.has("skill") ? skills.filter((skill) => skill.advertised && !denied("skill", skill.id)) : [];
  const instructions = t.row.instructions as StoredInstructions | null;
  const base = [agent?.system, t.session.systemPrompt ?? undefined, instructions ? renderInstructions(instructions) : undefined, skillList(advertised)].filter(
    (text): text is string => text !== undefined && text.trim() !== "",
  );
  const systemOf = (extra: readonly string[]): string | undefined => (base.length + extra.length > 0 ? [...base, ...extra].join("\n\n") : undefined);
  const fixed: TurnOffer = { system: systemOf([]), offered, tools };
  const allowed = (toolId: string): boolean => (selection.allow === undefined || selection.allow.includes(toolId)) && !isToolHidden(toolId, layers);
  return {
    agent,
    offered,
    selectedSkills,
    skills: offered.has("skill") ? skillCapability(skills) : undefined,
    offer() {
      const mcp = t.extensions?.mcp ? t.extensions.mcp(t.row.sessionId) : t.deps.environment.mcp?.(t.row.sessionId);
      if (!mcp || (mcp.tools.length === 0 && mcp.instructions.length === 0)) return fixed;
      const all = new Map(offered);
      for (const { tool } of mcp.tools) {
        if (!allowed(tool.id)) continue;
        if (all.has(tool.id)) throw failed("tool_conflict", `The MCP tool name ${JSON.stringify(tool.id)} duplicates another tool of this Turn`);
        all.set(tool.id, tool);
      }
      const serverInstructions = mcp.instructions.map((entry) => `Instructions from MCP server ${entry.server}:\n\n${entry.text.trim()}`);
      // Descriptions that list the request's tools (`execute`'s) see the MCP tools too.
      return { system: systemOf(serverInstructions), offered: all, tools: [...all.values()].map((tool) => modelTool(tool, all)) };
    },
  };
}

function renderInstructions(instructions: StoredInstructions): string {
  return renderInstructionFile({ _tag: "InstructionFile", canonicalPath: instructions.path, ...instructions });
}

/** The developer instruction that lists the Skills the model may load (safe metadata only). */
function skillList(skills: readonly LocalSkill[]): string | undefined {
  if (skills.length === 0) return undefined;
  const lines = skills.map((skill) => `- ${skill.id}${skill.displayName !== skill.id ? ` (${skill.displayName})` : ""}: ${skill.description}${skill.userInvocable ? "" : " [model-only]"}`);
  return `Skills you can load with the skill tool (pass the exact name) when a task matches one:\n${lines.join("\n")}`;
}

/** Loads a discovered Skill by exact id, re-reading its file each time. */
function skillCapability(skills: readonly LocalSkill[]): SkillCapability {
  return {
    async load(name) {
      const skill = skills.find((candidate) => candidate.id === name);
      if (!skill) return undefined;
      // A plugin-registered Skill carries its declaration (the host's catalogs add them).
      const plugin = (skill as { plugin?: Skill }).plugin;
      if (plugin) return renderPluginSkill(plugin);
      const loaded = await loadSkill(skill);
      if (loaded._tag === "SkillLoadFailed") throw new ToolFailure("skill_unavailable", loaded.message);
      return renderLoadedSkill(loaded);
    },
  };
}
